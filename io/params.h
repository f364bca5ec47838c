/* Parameter files: declared keys (type, default, range, help), INI parsing, overrides, errors. */
#ifndef HS_PARAMS_H
#define HS_PARAMS_H

#include <stdint.h>
#include <stdio.h>

typedef enum {
    HS_PARAM_INT,       /* 64-bit integer */
    HS_PARAM_REAL,      /* double */
    HS_PARAM_BOOL,      /* true/false, yes/no, on/off, 1/0 */
    HS_PARAM_STRING,    /* any text; surrounding double quotes are removed */
    HS_PARAM_ENUM,      /* one of `choices`, given as "a|b|c" */
    HS_PARAM_INT_LIST,  /* integers separated by spaces or commas */
    HS_PARAM_REAL_LIST, /* reals separated by spaces or commas */
    HS_PARAM_NAMES      /* names separated by spaces or commas, a name that holds either in double
                         * quotes ("left wall", right); the quotes are kept in the value */
} hs_param_type;

/* The longest name a NAMES value hands out, with its terminating zero (longer ones are cut). */
#define HS_PARAM_NAME_MAX 128

#define HS_NO_MIN (-1.0e300)
#define HS_NO_MAX (1.0e300)

/* One declared key.  def == NULL makes the key required.  A STRING key whose default is ""
 * accepts an empty value (`quantum.observable=`: unset); other STRING keys refuse it.  min/max bound INT and REAL values and
 * every element of lists (inclusive).  For lists, choices may give the allowed lengths ("1|2|3"). */
typedef struct hs_param_decl {
    const char *section;
    const char *key;
    hs_param_type type;
    const char *def;
    double min, max;
    const char *choices;
    const char *help;
} hs_param_decl;

/* Register keys (typically a section's table, once per process, before loading).  Declaring the
 * same section.key twice is a programming error and returns HS_ERR_RUNTIME. */
int hs_params_declare(const hs_param_decl *decls, int count);

typedef struct hs_params hs_params;

/* Parse `file`, apply `section.key=value` overrides, check every value against its declaration
 * and fill in defaults.  All problems are reported as "source:line: section.key: message"
 * (the nearest declared name is suggested for typos) and HS_ERR_INPUT is returned; nothing else
 * is created.  Not collective: each rank may load the same file. */
int hs_params_load(const char *file, int noverrides, char *const *overrides, hs_params **out);
/* The same where some overrides stand for options (labels[i] not NULL: "--restart", "hpcsim
 * train"): messages name those by the label and number the others among themselves, as the user
 * typed them ("command line (override 2)"). */
int hs_params_load_labeled(const char *file, int noverrides, char *const *overrides, const char *const *labels, hs_params **out);
void hs_params_free(hs_params *p);

/* Typed access by "section.key".  Asking for an undeclared key or with the wrong type is a
 * programming error: it aborts with a message. */
int64_t hs_params_int(const hs_params *p, const char *name);
double hs_params_real(const hs_params *p, const char *name);
int hs_params_bool(const hs_params *p, const char *name);
const char *hs_params_string(const hs_params *p, const char *name); /* also ENUM */
/* The names of a NAMES key, quotes removed: the first max of them in out; returns how many the
 * value holds (more than max: the caller refuses the list). */
int hs_params_names(const hs_params *p, const char *name, char (*out)[HS_PARAM_NAME_MAX], int max);
/* An ENUM key's value as its index in the declared choices ("a|b|c": a is 0).  Solvers keep their
 * C enums in the order of the choices string (tests/unit/test_params.c checks each pair), so
 * that the value maps to the enum without restating the names. */
int hs_params_enum(const hs_params *p, const char *name);
/* The index of `value` in a choices string "a|b|c", or -1. */
int hs_params_choice_index(const char *choices, const char *value);
/* Copies up to max elements; returns how many the value has. */
int hs_params_int_list(const hs_params *p, const char *name, int64_t *out, int max);
int hs_params_real_list(const hs_params *p, const char *name, double *out, int max);
/* A per-dimension list (INT_LIST / REAL_LIST) of 1 or ndim values, one value meaning the same in every
 * dimension: out[0..ndim-1] filled, out[ndim..2] set to `fill`.  Another count is an input error
 * naming `key` and `ndim_key` (the key that set ndim, for the message).  Not collective. */
int hs_params_dim_ints(const hs_params *p, const char *key, const char *ndim_key, int ndim, int64_t out[3], int64_t fill);
int hs_params_dim_reals(const hs_params *p, const char *key, const char *ndim_key, int ndim, double out[3], double fill);
/* A STRING key naming an input file: the value as given when it is absolute or exists from the
 * working directory, else the same relative path beside the parameter file when that exists
 * (so that `hpcsim run some/dir/run.ini` finds the files next to run.ini), else the value. */
const char *hs_params_input_path(const hs_params *p, const char *name);

/* 1 when the key was given in the file or an override (not defaulted). */
int hs_params_is_set(const hs_params *p, const char *name);
/* Of the NULL-ended `keys` that could be to blame for an input error, the one the user set on the
 * command line (the latest change: the first such in the list), else the first set in the file,
 * else `fallback` (f0 = 1e300 given as an override was blamed on the file's jet_speed). */
const char *hs_params_first_set(const hs_params *p, const char *const *keys, const char *fallback);
/* A real or integer key whose default depends on another key (pinn.nu: each PDE's own coefficient;
 * shallow_water.perturbation_modes: at most half the cells in x): when the
 * user left it unset, its resolved value becomes `value`, so that what the files keep, `check`
 * prints and a rerun from a file's parameters reads is the value the run uses (they showed the
 * declared default, Burgers' nu, for a heat run at 0.1).  Its source stays "default". */
int hs_params_resolve_default(const hs_params *p, const char *name, double value);
/* 1 when key `name` was set by the user against the setting of key `cause` that makes the run
 * ignore it, i.e. set, and not a leftover of the file under a setting switched on the command line
 * (name from the file, cause from an override: `hpcsim run heat2d.ini heat.conductivity=constant`
 * leaves the file's layers unused, as the user asked). */
int hs_params_set_against(const hs_params *p, const char *name, const char *cause);
/* Key `name` that this configuration does not use because of the value of key `cause` (a layer's
 * conductivities under `heat.conductivity = constant`): an input error at name, "is not used with
 * CAUSE = VALUE", when hs_params_set_against (a key the run would ignore ran without a word). */
int hs_params_unused(const hs_params *p, const char *name, const char *cause);

/* An input error about a resolved key, located where its value came from (file:line, the
 * override, or "default").  Returns HS_ERR_INPUT. */
int hs_params_error(const hs_params *p, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The pending input error (hs_error_message, e.g. from a kernel that knows no parameter file) said
 * again as an input error about key `name`, located where its value came from: the kernel's own
 * "where: " prefix is dropped.  Clears the pending error; returns HS_ERR_INPUT. */
int hs_params_error_rekey(const hs_params *p, const char *name);
/* The same with the pending error's text whole, its "FILE: " kept: a file's reader (a checkpoint's)
 * whose message names the file, put under the key that named it. */
int hs_params_error_under_key(const hs_params *p, const char *name);
/* Print the resolved set: one "section.key = value   # source" line each, sorted by section. */
void hs_params_print(const hs_params *p, FILE *out);
/* The resolved set as INI text (malloc'd), for embedding in outputs and checkpoints. */
char *hs_params_to_ini(const hs_params *p);
/* The file the parameters came from ("" for none). */
const char *hs_params_file(const hs_params *p);

/* Compare the resolved set with a stored one (INI text from hs_params_to_ini, e.g. a
 * checkpoint's): fn is called for every key whose stored value differs from the current one as a
 * value of its type (numbers as numbers), in the stored order; a non-zero return stops the walk
 * and is returned.  Keys that one side does not have are skipped. */
typedef int (*hs_params_diff_fn)(void *user, const char *name, const char *stored, const char *now);
int hs_params_diff_ini(const hs_params *p, const char *ini, hs_params_diff_fn fn, void *user);
/* The command-line overrides of the set as shell words "section.key=value" (quoted where the
 * shell needs it), separated by spaces, leaving out key `skip` (may be NULL); malloc'd. */
char *hs_params_overrides_text(const hs_params *p, const char *skip);
/* One word quoted for a POSIX shell where needed (malloc'd). */
char *hs_params_shell_quote(const char *word);

/* An output file named by key `key`: the directory that will hold `path` must exist and be
 * writable, `path` must not be the parameter file itself nor an input file of a key declared by
 * hs_params_declare_inputs (writing it would replace the input),
 * the key's value must end in a file name (not "dir/", "." or ".."),
 * and with `exact`, `path` itself must not be a directory nor exist as anything but a regular file
 * (a device, pipe or socket: the run renames its file over it), and its name must leave room for
 * the run's temporary suffix (hs_params_check_name_length); otherwise an input error naming the key
 * ("what" says which file, e.g. "checkpoint").  Not collective. */
int hs_params_check_writable(const hs_params *p, const char *key, const char *path, const char *what, int exact);

/* An input file named by key `key` (`what` says which, e.g. "OpenQASM file") must exist, be a
 * regular file and open for reading; otherwise an input error naming the key, where a reader's own
 * error would name only the file ("nope.qasm: cannot open ...").  Not collective. */
int hs_params_check_input_file(const hs_params *p, const char *key, const char *path, const char *what);

/* The file name of `path` with `added` more characters (the extension and temporary suffix a writer
 * adds) must fit its file system's limit (pathconf _PC_NAME_MAX of the folder, 255 on most); an
 * input error naming the key otherwise ("what" as above).  hs_params_check_writable applies it to
 * exact paths with the 8 of '.partial'.  Not collective. */
int hs_params_check_name_length(const hs_params *p, const char *key, const char *path, size_t added, const char *what);
/* The size in bytes of the input file at path: -1 when it cannot be read (errno says why), -2 when
 * it is not a regular file (a directory, a device: where fseek/ftell gave LONG_MAX). */
int64_t hs_input_file_bytes(const char *path);
/* A real number written as in parameter files (decimal, finite, no hexadecimal, the whole string):
 * NULL when s is one (its value in *v), else what is wrong ("is not a number", "overflows a double
 * ..."), for the readers of other input files to say it the same way. */
const char *hs_parse_real(const char *s, double *v);
/* The key of `section` set in the file or an override (not a default) on the earliest file line,
 * as "section.key" in name; 0 when none is set. */
int hs_params_section_set(const hs_params *p, const char *section, char *name, size_t len);
/* The same, counting only the keys hs_params_set_against `cause`. */
int hs_params_section_set_against(const hs_params *p, const char *section, const char *cause, char *name, size_t len);
/* 1 when "section.key" is a declared parameter. */
int hs_params_declared(const char *name);
/* 1 when paths a and b both exist and name the same file (device and inode). */
int hs_same_file(const char *a, const char *b);
/* 1 when paths a and b name the same file or would once written: the same existing file, or the
 * same name in the same directory (for outputs that do not exist yet). */
int hs_same_target(const char *a, const char *b);
/* 1 when `path` names the parameter file p was read from (the same file, by device and inode). */
int hs_params_is_param_file(const hs_params *p, const char *path);
/* Keys ("section.key", NULL-terminated list, static storage) whose values name input files that a
 * run reads: hs_params_check_writable refuses an output onto one of them. */
int hs_params_declare_inputs(const char *const *names);
/* The input-file key whose file (resolved as hs_params_input_path) `path` would overwrite; NULL
 * when none ("" and "none" name no file). */
const char *hs_params_input_named(const hs_params *p, const char *path);
/* The declared input-file keys this parameter set uses (set to a file, not "none"), at most max,
 * in declaration order; returns how many. */
int hs_params_inputs_used(const hs_params *p, const char **keys, int max);

/* Print every declared key with type, default, range and help (`hpcsim params`). */
void hs_params_print_declarations(FILE *out);
/* The same as Markdown: one table per section ("### [section]", then key, type, default, allowed
 * values, meaning), for the sections named (nsections = 0: all), in declaration order.  An
 * undeclared section is an input error listing the known ones.  Not collective. */
int hs_params_print_markdown(FILE *out, int nsections, const char *const *sections);

/* 1 when a list of blank- or comma-separated items has an empty one (a comma with nothing before or
 * after it, outside double quotes): the rule every list key follows, for lists a solver parses. */
int hs_params_list_has_empty(const char *s);
/* Text files' lines end at LF, CRLF or a bare CR (classic Mac files; Python's universal newlines
 * read them so): of a line as getline returned it (s, len bytes), the length of its first part,
 * ended by a CR that no LF follows (that CR becomes NUL), or len when there is none. */
size_t hs_text_bare_cr_line(char *s, size_t len);
/* Of such a line, unsplit, the part that holds byte `at` (0: the first; a reader counts it onto
 * its line number) and, in *start, where that part begins (for the byte's column). */
int64_t hs_text_bare_cr_part(const char *s, size_t at, size_t *start);
/* The first byte of s (len bytes) that no text file holds (a control character other than tab, LF
 * and CR, or DEL), with its offset in *at; -1 when there is none.  NUL included: a reader that
 * splits lines at whitespace with strtok took a NUL for the end of the line and dropped the rest. */
int hs_text_binary_byte(const char *s, size_t len, size_t *at);

#endif

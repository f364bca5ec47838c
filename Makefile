# hpcsim top-level build: detects the optional libraries, builds bin/hpcsim, lib/libhpcsim.a and the tests.
#
# Each optional part is auto-detected; force it with CUDA=0|1, MPI=0|1, OPENMP=0|1, HDF5=0|1,
# HDF5_PARALLEL=0|1, NETCDF=0|1, FFTW=0|1, OPENBLAS=0|1, NCCL=0|1, CJSON=0|1, METIS=0|1.  CUDA_ARCH=90 picks the SM target (PTX is embedded too).
# Libraries unpacked from .deb files into $(DEPS_PREFIX) (see scripts/offline_deps.sh) are used when
# the system has none (the GPU machine has no network).

.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD      ?= build
V          ?= 0
Q          := $(if $(filter 1,$(V)),,@)
PREFIX     ?= /usr/local
CUDA_ARCH  ?= 90
CUDA_HOME  ?= $(firstword $(wildcard /usr/local/cuda) $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)))
DEPS_PREFIX ?= $(CURDIR)/.deps
VERSION    := $(shell cat VERSION)
GIT_HASH   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
MULTIARCH  := $(shell gcc -print-multiarch 2>/dev/null)

# ---------------------------------------------------------------- detection
comma := ,
pc_ok = $(shell pkg-config --exists $(1) 2>/dev/null && echo 1)
hash := \#
hdr_ok = $(shell printf '$(hash)include <$(1)>\nint main(void){return 0;}\n' | $(CC_PROBE) $(2) -x c - -o /dev/null -fsyntax-only 2>/dev/null && echo 1)
CC_PROBE := gcc

# Offline-unpacked packages (dpkg -x) live in $(DEPS_PREFIX)/usr/{include,lib/<multiarch>}.
DEPS_INC := $(if $(wildcard $(DEPS_PREFIX)/usr/include),-I$(DEPS_PREFIX)/usr/include)
DEPS_LIB := $(if $(wildcard $(DEPS_PREFIX)/usr/lib/$(MULTIARCH)),-L$(DEPS_PREFIX)/usr/lib/$(MULTIARCH) -Wl$(comma)-rpath$(comma)$(DEPS_PREFIX)/usr/lib/$(MULTIARCH))

ifeq ($(origin CUDA),undefined)
  CUDA := $(if $(wildcard $(CUDA_HOME)/bin/nvcc),1,0)
endif
ifeq ($(origin MPI),undefined)
  MPI := $(if $(shell command -v mpicc 2>/dev/null),1,0)
endif
ifeq ($(origin OPENMP),undefined)
  OPENMP := $(shell echo 'int main(void){return 0;}' | gcc -fopenmp -x c - -o /dev/null 2>/dev/null && echo 1 || echo 0)
endif
# HDF5 and NetCDF come in a serial and an MPI-parallel flavour (Debian: libhdf5-openmpi-dev,
# libnetcdf-mpi-dev); with MPI on, the parallel one is taken where present.  NetCDF links HDF5
# itself and two HDF5 libraries must not meet in one process, so both take the same flavour:
# parallel HDF5 only when NetCDF is parallel too or left out.  HDF5_PARALLEL=0|1 forces it.
# (Debian's plain hdf5.pc follows the alternatives and may name the parallel flavour: the serial
# one is hdf5-serial there.)  A flavour counts only with its high-level library's header (hdf5_hl.h:
# H5DS, the dimension scales that make the HDF5 output readable as netCDF-4; libhdf5_hl is linked).
hdf5_hl_ok = $(call hdr_ok,hdf5_hl.h,$(shell pkg-config --cflags $(1) 2>/dev/null))
HDF5_PAR_PC   := $(if $(filter 1,$(MPI)),$(if $(call pc_ok,hdf5-openmpi),$(if $(call hdf5_hl_ok,hdf5-openmpi),hdf5-openmpi)))
NETCDF_PAR_PC := $(if $(filter 1,$(MPI)),$(if $(call pc_ok,netcdf-mpi),netcdf-mpi))
HDF5_SER_PC   := $(if $(call pc_ok,hdf5-serial),hdf5-serial,$(if $(call pc_ok,hdf5),$(if $(findstring mpi,$(shell pkg-config --cflags hdf5 2>/dev/null)),,hdf5)))
HDF5_SER_PC   := $(if $(HDF5_SER_PC),$(if $(call hdf5_hl_ok,$(HDF5_SER_PC)),$(HDF5_SER_PC)))
ifeq ($(origin HDF5),undefined)
  HDF5 := $(if $(or $(HDF5_SER_PC),$(wildcard /usr/include/hdf5/serial/hdf5_hl.h),$(HDF5_PAR_PC)),1,0)
endif
ifeq ($(origin NETCDF),undefined)
  NETCDF := $(if $(or $(call pc_ok,netcdf),$(NETCDF_PAR_PC)),1,0)
endif
ifeq ($(origin HDF5_PARALLEL),undefined)
  HDF5_PARALLEL := $(if $(and $(filter 1,$(HDF5)),$(HDF5_PAR_PC),$(or $(filter 0,$(NETCDF)),$(NETCDF_PAR_PC))),1,0)
endif
NETCDF_PARALLEL := $(if $(and $(filter 1,$(NETCDF)),$(filter 1,$(HDF5_PARALLEL)),$(NETCDF_PAR_PC)),1,0)
ifeq ($(HDF5_PARALLEL),1)
  ifneq ($(MPI),1)
    $(error HDF5_PARALLEL=1 needs MPI=1)
  endif
endif
ifeq ($(origin FFTW),undefined)
  FFTW := $(if $(call pc_ok,fftw3),1,$(if $(wildcard /usr/include/fftw3.h),1,0))
endif
ifeq ($(origin OPENBLAS),undefined)
  OPENBLAS := $(if $(call pc_ok,openblas),1,$(if $(wildcard /usr/include/$(MULTIARCH)/cblas.h /usr/include/cblas.h /usr/include/openblas/cblas.h),1,0))
endif
ifeq ($(origin NCCL),undefined)
  NCCL := $(if $(filter 1,$(CUDA)),$(if $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h),1,0),0)
endif
# cuDNN (the surrogate's convolutions on the GPU): in the CUDA toolkit, the system, or CUDNN_HOME
# (e.g. the nvidia-cudnn wheel's folder site-packages/nvidia/cudnn).  Without it the CUDA backend
# convolves by im2col + cuBLAS.
CUDNN_HOME ?=
CUDNN_HDR := $(firstword $(wildcard $(if $(CUDNN_HOME),$(CUDNN_HOME)/include/cudnn.h) $(CUDA_HOME)/include/cudnn.h /usr/include/cudnn.h /usr/include/$(MULTIARCH)/cudnn.h))
ifeq ($(origin CUDNN),undefined)
  CUDNN := $(if $(filter 1,$(CUDA)),$(if $(CUDNN_HDR),1,0),0)
endif
# cJSON (Debian libcjson-dev) reads JSON files back (hpcsim compare on the quantum solver's results).
ifeq ($(origin CJSON),undefined)
  CJSON := $(if $(or $(call pc_ok,libcjson),$(wildcard /usr/include/cjson/cJSON.h $(DEPS_PREFIX)/usr/include/cjson/cJSON.h)),1,0)
endif
# METIS (Debian libmetis-dev) partitions the finite-element meshes over MPI ranks; without it they are
# split by recursive coordinate bisection.
ifeq ($(origin METIS),undefined)
  METIS := $(if $(wildcard /usr/include/metis.h $(DEPS_PREFIX)/usr/include/metis.h),1,0)
endif
HAVE_CMOCKA := $(if $(call pc_ok,cmocka),1,$(if $(wildcard $(DEPS_PREFIX)/usr/include/cmocka.h),1,0))

# ---------------------------------------------------------------- flags
CC       := $(if $(filter 1,$(MPI)),mpicc,gcc)
OPT      ?= -O3 -march=x86-64-v2
CFLAGS   ?= $(OPT) -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -fPIC
CPPFLAGS += -I. $(DEPS_INC) -DHS_VERSION='"$(VERSION)"'
LDLIBS   :=
LDFLAGS  += $(DEPS_LIB)
FEATURES :=

define feature
CPPFLAGS += -DHS_HAVE_$(1)=$(if $(filter 1,$(2)),1,0)
FEATURES += $(if $(filter 1,$(2)),+,-)$(shell echo $(1) | tr A-Z a-z)
endef
$(eval $(call feature,CUDA,$(CUDA)))
$(eval $(call feature,MPI,$(MPI)))
$(eval $(call feature,OPENMP,$(OPENMP)))
$(eval $(call feature,HDF5,$(HDF5)))
$(eval $(call feature,HDF5_PARALLEL,$(HDF5_PARALLEL)))
$(eval $(call feature,NETCDF,$(NETCDF)))
$(eval $(call feature,NETCDF_PARALLEL,$(NETCDF_PARALLEL)))
$(eval $(call feature,FFTW,$(FFTW)))
$(eval $(call feature,OPENBLAS,$(OPENBLAS)))
$(eval $(call feature,NCCL,$(NCCL)))
$(eval $(call feature,CUDNN,$(CUDNN)))
$(eval $(call feature,CJSON,$(CJSON)))
$(eval $(call feature,METIS,$(METIS)))
CPPFLAGS += -DHS_FEATURES='"$(strip $(FEATURES))"'

ifeq ($(OPENMP),1)
  CFLAGS += -fopenmp
  LDFLAGS += -fopenmp
else
  CFLAGS += -Wno-unknown-pragmas
endif
# -lhdf5_hl (dimension scales) goes before the -lhdf5 it needs
hdf5_with_hl = $(patsubst -lhdf5,-lhdf5_hl -lhdf5,$(1))
ifeq ($(HDF5_PARALLEL),1)
  CPPFLAGS += $(shell pkg-config --cflags $(HDF5_PAR_PC))
  LDLIBS += $(call hdf5_with_hl,$(shell pkg-config --libs $(HDF5_PAR_PC)))
else ifeq ($(HDF5),1)
  CPPFLAGS += $(if $(HDF5_SER_PC),$(shell pkg-config --cflags $(HDF5_SER_PC)),-I/usr/include/hdf5/serial)
  LDLIBS += $(call hdf5_with_hl,$(if $(HDF5_SER_PC),$(shell pkg-config --libs $(HDF5_SER_PC)),-L/usr/lib/$(MULTIARCH)/hdf5/serial -lhdf5))
endif
ifeq ($(NETCDF_PARALLEL),1)
  # Debian's netcdf-mpi.pc names /usr/include, where the serial flavour's headers are
  CPPFLAGS += -I$(shell pkg-config --variable=prefix $(NETCDF_PAR_PC))/include $(shell pkg-config --cflags $(NETCDF_PAR_PC))
  LDLIBS += $(shell pkg-config --libs $(NETCDF_PAR_PC))
else ifeq ($(NETCDF),1)
  CPPFLAGS += $(shell pkg-config --cflags netcdf)
  LDLIBS += $(shell pkg-config --libs netcdf)
endif
ifeq ($(FFTW),1)
  LDLIBS += -lfftw3 -lfftw3f $(if $(filter 1,$(OPENMP)),-lfftw3_omp -lfftw3f_omp)
endif
ifeq ($(OPENBLAS),1)
  CPPFLAGS += $(or $(shell pkg-config --cflags openblas 2>/dev/null),$(if $(wildcard /usr/include/$(MULTIARCH)/openblas-pthread),-I/usr/include/$(MULTIARCH)/openblas-pthread))
  LDLIBS += $(or $(shell pkg-config --libs openblas 2>/dev/null),-lopenblas)
endif
ifeq ($(CJSON),1)
  LDLIBS += -lcjson
endif
ifeq ($(METIS),1)
  LDLIBS += -lmetis
endif
LDLIBS += -lm

NVCC      := $(CUDA_HOME)/bin/nvcc
NVCCFLAGS ?= -O3 -g -lineinfo
NVCCFLAGS += -std=c++17 -gencode=arch=compute_$(CUDA_ARCH),code=sm_$(CUDA_ARCH) \
             -gencode=arch=compute_$(CUDA_ARCH),code=compute_$(CUDA_ARCH) \
             -Xcompiler -fPIC,-Wall,-Wextra,-Wno-unused-parameter$(if $(filter 1,$(OPENMP)),$(comma)-fopenmp) \
             --expt-relaxed-constexpr -DHS_CUDA_ARCH=$(CUDA_ARCH)
ifeq ($(CUDA),1)
  CPPFLAGS += -I$(CUDA_HOME)/include
  # cuBLAS, cuSPARSE and cuFFT are loaded on first use (kernels/cuda_libs.cu: dlopen), not linked
  LDLIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -ldl \
            $(if $(filter 1,$(NCCL)),-lnccl) -lcudart -lstdc++
endif
ifeq ($(CUDNN),1)
  # a wheel's lib folder has libcudnn.so.9 and no libcudnn.so link
  ifneq ($(CUDNN_HOME),)
    CPPFLAGS += -I$(CUDNN_HOME)/include
    LDLIBS += $(foreach d,lib lib64,$(if $(wildcard $(CUDNN_HOME)/$(d)),-L$(CUDNN_HOME)/$(d) -Wl$(comma)-rpath$(comma)$(CUDNN_HOME)/$(d)))
    LDLIBS += $(if $(wildcard $(CUDNN_HOME)/lib*/libcudnn.so),-lcudnn,-l:libcudnn.so.9)
  else
    LDLIBS += -lcudnn
  endif
endif

# ---------------------------------------------------------------- sources
LIB_DIRS := kernels io physics solvers ml_surrogate
C_SRCS   := $(sort $(shell find $(LIB_DIRS) -name "*.c" 2>/dev/null))
# *_lto.cu are cuFFT callbacks compiled to LTO-IR and embedded in an object (below), not objects themselves
CU_SRCS  := $(if $(filter 1,$(CUDA)),$(sort $(shell find $(LIB_DIRS) -name "*.cu" ! -name "*_lto.cu" 2>/dev/null)))
LIB_OBJS := $(C_SRCS:%.c=$(BUILD)/%.o) $(CU_SRCS:%.cu=$(BUILD)/%.cu.o)
LIB      := lib/libhpcsim.a
BIN      := bin/hpcsim
ifneq ($(BUILD),build)
  LIB := $(BUILD)/lib/libhpcsim.a
  BIN := $(BUILD)/bin/hpcsim
endif

UNIT_SRCS  := $(sort $(wildcard tests/unit/test_*.c))
MPI_SRCS   := $(sort $(wildcard tests/mpi/test_*.c))
VERIFY_SRCS:= $(sort $(wildcard tests/verify/test_*.c))
BENCH_SRCS := $(filter-out tests/bench/bench_util.c,$(sort $(wildcard tests/bench/bench_*.c)))
TEST_BINS  := $(UNIT_SRCS:%.c=$(BUILD)/%) $(MPI_SRCS:%.c=$(BUILD)/%) $(VERIFY_SRCS:%.c=$(BUILD)/%)
BENCH_BINS := $(BENCH_SRCS:%.c=$(BUILD)/%)
TEST_UTIL  := $(BUILD)/tests/test_util.o
BENCH_UTIL := $(BUILD)/tests/bench/bench_util.o

# Rebuild everything when the configuration changes.
CONFIG_STAMP := $(BUILD)/config.stamp
CONFIG_LINE  := $(CC) $(CFLAGS) $(CPPFLAGS) $(NVCCFLAGS) $(LDLIBS)
$(shell mkdir -p $(BUILD); echo '$(CONFIG_LINE)' | cmp -s - $(CONFIG_STAMP) || echo '$(CONFIG_LINE)' > $(CONFIG_STAMP))

.PHONY: all lib tests deps demo test test-gpu run-tests asan bench validate install clean features docs
all: $(BIN) features

features: $(BIN)
	@echo "hpcsim $(VERSION) ($(GIT_HASH)) built in $(BUILD)/ with: $(strip $(FEATURES))"
	@echo "  found:    $(strip $(foreach f,$(FEATURES),$(if $(filter +%,$(f)),$(patsubst +%,%,$(f)))))"
	@echo "  left out: $(or $(strip $(foreach f,$(FEATURES),$(if $(filter -%,$(f)),$(patsubst -%,%,$(f))))),nothing)"

lib: $(LIB)
$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

# The git hash lives in one object, rebuilt when the hash changes, so commits do not rebuild everything.
GIT_STAMP := $(BUILD)/git_hash.stamp
$(shell mkdir -p $(BUILD); echo '$(GIT_HASH)' | cmp -s - $(GIT_STAMP) || echo '$(GIT_HASH)' > $(GIT_STAMP))
$(BUILD)/kernels/version.o: kernels/version.c $(GIT_STAMP) $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(CPPFLAGS) -DHS_GIT_HASH='"$(GIT_HASH)"' $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.cu.o: %.cu $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  NVCC  $<"
	$(Q)$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# The Poisson solver's divide as a cuFFT load callback: LTO-IR that cuFFT links into its C2R kernels
# at plan time (kernels/fft/poisson_hook_lto.cu), embedded by bin2c as an array in poisson_cuda.cu.
$(BUILD)/gen/poisson_hook_lto_ir.h: kernels/fft/poisson_hook_lto.cu kernels/fft/poisson_point.h kernels/fft/poisson_impl.h kernels/hd.h $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  LTO   $<"
	$(Q)$(NVCC) $(CPPFLAGS) -std=c++17 -O3 -dc -fatbin -gencode=arch=compute_$(CUDA_ARCH),code=lto_$(CUDA_ARCH) $< -o $(@:.h=.fatbin)
	$(Q)$(CUDA_HOME)/bin/bin2c --name hs_poisson_hook_lto_ir --type longlong $(@:.h=.fatbin) > $@
$(BUILD)/kernels/fft/poisson_cuda.cu.o: $(BUILD)/gen/poisson_hook_lto_ir.h
$(BUILD)/kernels/fft/poisson_cuda.cu.o: NVCCFLAGS += -I$(BUILD)/gen

$(BIN): $(BUILD)/app/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# ---------------------------------------------------------------- tests
tests: $(TEST_BINS) $(BIN)
$(BUILD)/tests/%: tests/%.c $(TEST_UTIL) $(LIB) $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  TEST  $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Itests $< $(TEST_UTIL) $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka -o $@
$(BUILD)/tests/bench/bench_%: tests/bench/bench_%.c $(BENCH_UTIL) $(LIB) $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  BENCH $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Itests $< $(BENCH_UTIL) $(LIB) $(LDFLAGS) $(LDLIBS) -o $@
$(BENCH_UTIL): tests/bench/bench_util.c tests/bench/bench_util.h $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -c $< -o $@
$(TEST_UTIL): tests/test_util.c tests/test_util.h $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -c $< -o $@

# `make test` is what CI runs: dependencies, build, the quick suite on the CPU backend.
# The build and the run are sub-makes so that they detect what `make deps` has just installed
# (on a fresh machine this make was parsed before mpicc existed).
# The build uses every core (CI's two halve its time); the tests run one after another.
test: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) all tests
	$(MAKE) --no-print-directory run-tests

run-tests:
	HS_TEST_DEVICE=cpu BUILD=$(BUILD) MPI=$(MPI) tests/run_tests.sh

# The same suites with the CUDA backend (on the GPU machine).
test-gpu:
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) all tests CUDA=1
	HS_TEST_DEVICE=cuda BUILD=$(BUILD) MPI=$(MPI) tests/run_tests.sh

# Sanitizers on the CPU path.  CUDA off (ASan and the CUDA driver do not mix) and MPI off: the
# single-rank stand-in keeps Open MPI's own unreleased allocations (in plugins it unloads, which
# LeakSanitizer cannot attribute) out of the leak report; the MPI paths run in `make test`.
asan:
	$(MAKE) all tests BUILD=build-asan CUDA=0 MPI=0 OPT=-O1 \
	  CFLAGS='-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined' \
	  LDFLAGS='-fsanitize=address,undefined -fopenmp'
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  HS_TEST_DEVICE=cpu BUILD=build-asan MPI=0 tests/run_tests.sh

bench: all $(BENCH_BINS)
	BUILD=$(BUILD) scripts/run_bench.sh

validate: all tests
	BUILD=$(BUILD) scripts/run_validate.sh

# The default example end to end: the 2D heat case, its NetCDF (or HDF5) output and a PNG of the
# final field, both under demo/.
demo: deps
	$(MAKE) all
	scripts/demo.sh $(BIN)

deps:
	@scripts/deps.sh

# The parameter reference blocks of docs/*.md, regenerated from the declared keys
# (tests/cli/test_docs.sh fails when they are stale).
docs: $(BIN)
	HS_BIN=$(BIN) python3 scripts/gen_docs.py

install: all
	install -d $(PREFIX)/bin $(PREFIX)/lib/pkgconfig $(PREFIX)/include/hpcsim
	install -m 755 $(BIN) $(PREFIX)/bin/hpcsim
	install -m 644 $(LIB) $(PREFIX)/lib/libhpcsim.a
	for h in $$(find kernels io physics solvers ml_surrogate -name '*.h'); do install -D -m 644 $$h $(PREFIX)/include/hpcsim/$$h; done
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBS@|$(LDFLAGS) $(LDLIBS)|g' \
	  -e 's|@CFLAGS@|$(filter -DHS_HAVE_%,$(CPPFLAGS))|g' scripts/hpcsim.pc.in > $(PREFIX)/lib/pkgconfig/hpcsim.pc

clean:
	rm -rf build build-asan bin lib

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

#!/bin/bash
# Slurm job script: the 3D heat example on 4 GPUs (one rank per GPU), checkpointing before the
# time limit (Slurm sends SIGUSR1 120 s before it; hpcsim writes a checkpoint and exits 3), and
# continuing from the checkpoint when resubmitted.
#SBATCH --job-name=hpcsim-heat
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --time=01:00:00
#SBATCH --signal=B:USR1@120
set -u
INPUT=${INPUT:-inputs/heat3d.ini}
CKPT=${CKPT:-heat3d.chk}
RESTART=()
[ -f "$CKPT" ] && RESTART=(--restart "$CKPT")
# srun forwards the signal to every rank; hpcsim's ranks agree on it at the next step
srun --kill-on-bad-exit=1 bin/hpcsim run "$INPUT" checkpoint.path="$CKPT" "${RESTART[@]}" &
wait $!
status=$?
if [ $status = 3 ]; then
    echo "stopped at the time limit with a checkpoint in $CKPT; resubmit this script to continue"
    # sbatch "$0"   # uncomment to chain jobs automatically
fi
exit $status

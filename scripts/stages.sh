# Stage bookkeeping, sourced by scripts/test: `stage NAME WHAT` ends the running stage,
# says in one line what the next one does (and where its time goes), and starts its
# clock; `stages_summary`, run at exit, prints each stage's elapsed seconds and the CPU
# seconds its processes used, so a long run says where the time went (and, when it
# failed, in which stage). On a shared machine the wall clock grows with the others'
# load, the CPU seconds do not: the table says the load average at the start and end.
# shellcheck shell=bash
_STAGE_NAMES=()
_STAGE_SECONDS=()
_STAGE_CPU=()
_STAGE_NAME=""
_STAGE_START=0
_STAGE_CPU_START=0
_STAGE_LOAD_START=""

# CPU seconds used by this shell's finished children (user + system, from /proc; 0
# where there is none).
_stage_cpu() {
  awk -v tck="$(getconf CLK_TCK 2>/dev/null || echo 100)" \
    '{ sub(/^.*\) /, ""); print int(($14 + $15) / tck) }' "/proc/$$/stat" 2>/dev/null || echo 0
}

_stage_load() {
  cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"
}

_stage_end() {
  if [ -n "$_STAGE_NAME" ]; then
    _STAGE_NAMES+=("$_STAGE_NAME")
    _STAGE_SECONDS+=("$((SECONDS - _STAGE_START))")
    _STAGE_CPU+=("$(($(_stage_cpu) - _STAGE_CPU_START))")
    _STAGE_NAME=""
  fi
}

# stage NAME WHAT: one line before the stage starts.
stage() {
  _stage_end
  _STAGE_NAME=$1
  _STAGE_START=$SECONDS
  _STAGE_CPU_START=$(_stage_cpu)
  [ -n "$_STAGE_LOAD_START" ] || _STAGE_LOAD_START=$(_stage_load)
  echo "== $1: $2"
}

# The table of stage: wall seconds, CPU seconds; keeps the exit status it was called with.
stages_summary() {
  local status=$? failed=$_STAGE_NAME i total=0 cpu=0
  _stage_end
  [ ${#_STAGE_NAMES[@]} -eq 0 ] && return "$status"
  echo "== time per stage (wall, and CPU of its processes; load average $_STAGE_LOAD_START at \
the start, $(_stage_load) at the end)"
  for i in "${!_STAGE_NAMES[@]}"; do
    printf '  %-24s %6d s %6d s cpu\n' "${_STAGE_NAMES[$i]}" "${_STAGE_SECONDS[$i]}" \
      "${_STAGE_CPU[$i]}"
    total=$((total + _STAGE_SECONDS[i]))
    cpu=$((cpu + _STAGE_CPU[i]))
  done
  printf '  %-24s %6d s %6d s cpu\n' "total" "$total" "$cpu"
  if [ "$status" -ne 0 ] && [ -n "$failed" ]; then
    echo "== failed in stage: $failed (exit $status)"
  fi
  return "$status"
}

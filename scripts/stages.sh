# Stage bookkeeping, sourced by scripts/test: `stage NAME WHAT` ends the running stage,
# says in one line what the next one does (and where its time goes), and starts its
# clock; `stages_summary`, run at exit, prints each stage's elapsed seconds, so a long
# run says where the time went (and, when it failed, in which stage).
# shellcheck shell=bash
_STAGE_NAMES=()
_STAGE_SECONDS=()
_STAGE_NAME=""
_STAGE_START=0

_stage_end() {
  if [ -n "$_STAGE_NAME" ]; then
    _STAGE_NAMES+=("$_STAGE_NAME")
    _STAGE_SECONDS+=("$((SECONDS - _STAGE_START))")
    _STAGE_NAME=""
  fi
}

# stage NAME WHAT: one line before the stage starts.
stage() {
  _stage_end
  _STAGE_NAME=$1
  _STAGE_START=$SECONDS
  echo "== $1: $2"
}

# The table of stage: seconds; keeps the exit status it was called with.
stages_summary() {
  local status=$? failed=$_STAGE_NAME i total=0
  _stage_end
  [ ${#_STAGE_NAMES[@]} -eq 0 ] && return "$status"
  echo "== time per stage"
  for i in "${!_STAGE_NAMES[@]}"; do
    printf '  %-24s %6d s\n' "${_STAGE_NAMES[$i]}" "${_STAGE_SECONDS[$i]}"
    total=$((total + _STAGE_SECONDS[i]))
  done
  printf '  %-24s %6d s\n' "total" "$total"
  if [ "$status" -ne 0 ] && [ -n "$failed" ]; then
    echo "== failed in stage: $failed (exit $status)"
  fi
  return "$status"
}

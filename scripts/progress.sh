# Sourced by scripts/setup.sh: progress lines for a long install.
#   step TEXT            prints "[setup m:ss] TEXT", the time since the script started
#   ... | pip_progress   reads pip's output and prints a step line every 25 requirements pip collects, one when it
#                        starts installing, one a minute while it installs (pip prints nothing then) and one when
#                        it is done, instead of pip's hundreds of lines
step() {
  printf '[setup %d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"
}

pip_progress() {
  local line collected=0 ticker=
  while IFS= read -r line; do
    case "$line" in
      Collecting\ *)
        collected=$((collected + 1))
        if [ $((collected % 25)) = 0 ]; then
          line=${line#Collecting }
          step "  $collected requirements collected (${line%% *})"
        fi
        ;;
      Installing\ collected\ packages:*)
        set -- ${line#Installing collected packages:}
        step "  installing $# $([ $# = 1 ] && echo package || echo packages) (the longest part)"
        (while sleep "${EVALKIT_PROGRESS_EVERY:-60}"; do step "  still installing"; done) &
        ticker=$!
        ;;
      Successfully\ installed\ *)
        [ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true
        ticker=
        set -- ${line#Successfully installed }
        step "  installed $# $([ $# = 1 ] && echo package || echo packages)"
        ;;
    esac
  done
  [ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true
}

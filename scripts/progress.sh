# Sourced by scripts/setup.sh: progress lines for a long install.
#   step TEXT       prints "[setup m:ss] TEXT", the time since the script started
#   ... | pip_progress   reads pip's output and prints a step line every 25 packages collected, then one when pip
#                        installs them and one when it is done, instead of pip's hundreds of lines
step() {
  printf '[setup %d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"
}

pip_progress() {
  local line collected=0
  while IFS= read -r line; do
    case "$line" in
      Collecting\ *)
        collected=$((collected + 1))
        if [ $((collected % 25)) = 0 ]; then
          line=${line#Collecting }
          step "  $collected packages collected (${line%% *})"
        fi
        ;;
      Installing\ collected\ packages:*)
        step "  $collected packages collected; installing them (the longest part)"
        ;;
      Successfully\ installed\ *)
        set -- ${line#Successfully installed }
        step "  installed $# $([ $# = 1 ] && echo package || echo packages)"
        ;;
    esac
  done
}

# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=sh
# --help and unknown options for the scripts (issue 39, "fail fast, fail kindly").
# POSIX sh, so that sh scripts can source it too:
#   . "$(dirname "$0")/lib/cli.sh"
#
#   cli_usage FILE        print FILE's header comment (the '#' lines after the shebang,
#                         without '# ' and SPDX lines) on stdout
#   cli_unknown FILE ARG  "NAME: unknown option ARG; see --help" on stderr, exit 2
#   cli_plain FILE ARG... for a script that takes no option, only positional
#                         arguments: -h or --help anywhere prints the usage and exits
#                         0; otherwise an ARG that starts with '-' is refused
#                         (cli_unknown); returns 0 when the arguments are fine
# Call it first: --help and a bad option must do no work (no build, no install).

cli_usage() {
  awk 'NR == 1 && /^#!/ { next }
       /^# SPDX/ { next }
       /^#/ { sub(/^# ?/, ""); print; next }
       { exit }' "$1"
}

cli_unknown() {
  echo "${1##*/}: unknown option $2; see --help" >&2
  exit 2
}

cli_plain() {
  _cli_file=$1
  shift
  for _cli_arg in "$@"; do
    case $_cli_arg in
      -h|--help) cli_usage "$_cli_file"; exit 0 ;;
    esac
  done
  for _cli_arg in "$@"; do
    case $_cli_arg in
      -?*) cli_unknown "$_cli_file" "$_cli_arg" ;;
    esac
  done
  return 0
}

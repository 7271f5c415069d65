# bash completion for rocelab's commands (installed once per command name in
# share/bash-completion/completions, where bash-completion loads it on demand;
# without bash-completion: `. packaging/completion/rocelab.bash`).
#
# Options come from the program's own --help, and the key=value words of
# rocelab-dp's --coll, --gen, --rdma and --nic from `rocelab-dp --coll help` and
# the like, so the completion knows what the installed program knows and has no
# list of its own to keep up to date. Needs only bash.

# The whitespace-separated word under the cursor, whole: bash splits words at
# '=', ':' and '>' too (COMP_WORDBREAKS), which a KEY=VALUE,... spec is full of.
_rocelab_token() {
  local line=${COMP_LINE:0:COMP_POINT}
  printf '%s' "${line##*[[:space:]]}"
}

# _rocelab_reply TOKEN CANDIDATE...: COMPREPLY with the candidates that start with
# TOKEN, less the part of TOKEN that bash has already split off its current word.
_rocelab_reply() {
  local tok=$1 cur=${COMP_WORDS[COMP_CWORD]} c pre
  shift
  [[ $cur == [=:\>] ]] && cur=""
  pre=${tok%"$cur"}
  COMPREPLY=()
  for c in "$@"; do
    [[ $c == "$tok"* ]] && COMPREPLY+=("${c#"$pre"}")
  done
}

# The long options PROG --help prints.
_rocelab_options() {
  "$1" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# KEY=VALUE,... after OPTION: `PROG OPTION help` lists the keys, two spaces in,
# with their values; values of the form a|b|c are offered after KEY=.
_rocelab_keys() {
  local prog=$1 opt=$2 tok=$3 head="" last key k v
  local -a cands=()
  if [[ $tok == *[,:]* ]]; then
    head=${tok%[,:]*}
    head=${tok:0:${#head}+1}
  elif [[ $opt == --gen || $opt == --rdma ]]; then
    return  # SRC>DST: comes first
  fi
  last=${tok#"$head"}
  local table
  table=$("$prog" "$opt" help 2>&1 | awk '/^  [a-z]/ { print $1, $2 }')
  if [[ $last == *=* ]]; then
    key=${last%%=*}
    v=$(awk -v k="$key" '$1 == k { print $2 }' <<< "$table")
    [[ $v == *'|'* ]] || return
    for k in ${v//|/ }; do cands+=("$head$key=$k"); done
  else
    for k in $(awk '{ print $1 }' <<< "$table"); do cands+=("$head$k="); done
    [[ -z $head ]] && cands+=(help)
  fi
  # no space after a key or value: a ',' and the next key may follow
  compopt -o nospace 2>/dev/null
  _rocelab_reply "$tok" "${cands[@]}"
}

_rocelab() {
  local prog=${COMP_WORDS[0]} tok prev
  tok=$(_rocelab_token)
  local line=${COMP_LINE:0:COMP_POINT}
  line=${line%"$tok"}
  line=${line%"${line##*[![:space:]]}"}
  prev=${line##*[[:space:]]}
  case ${prog##*/}:$prev in
    rocelab-dp:--coll|rocelab-dp:--gen|rocelab-dp:--rdma|rocelab-dp:--nic)
      _rocelab_keys "$prog" "$prev" "$tok"
      return ;;
  esac
  if [[ $tok == -* ]]; then
    # shellcheck disable=SC2207  # one option a line, no spaces
    _rocelab_reply "$tok" $(_rocelab_options "$prog")
    return
  fi
  if [[ ${prog##*/} == rocelab-experiment && $prev != --* ]]; then
    # the experiment files shipped beside the command, by name, and local files
    local dir names=()
    dir=$(dirname "$(readlink -f "$(type -P "$prog")")" 2>/dev/null)/../experiments
    [[ -d $dir ]] && names=($(cd "$dir" && ls -- *.yaml 2>/dev/null | sed 's/\.yaml$//'))
    _rocelab_reply "$tok" "${names[@]}" $(compgen -f -- "$tok")
    return
  fi
  # shellcheck disable=SC2207
  COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
}

complete -F _rocelab rocelab-dp rocelab-topo rocelab-experiment rocelab-nic rocelab-lb \
  rocelab-p4 rocelab-viz rocelab-fabric rocelab-dashboard rocelab-exporter rocelab-llm rocelab-place

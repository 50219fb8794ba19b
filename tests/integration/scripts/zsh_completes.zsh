# What zsh's completion system offers for a command line, as a user pressing Tab gets it:
#   zsh -f zsh_completes.zsh FPATH 'LINE'
# prints each match and its description, one a line as MATCH<TAB>DESCRIPTION (what the
# listing shows beside it), after loading the completion functions of FPATH with compinit.
# An interactive zsh runs on a pseudo-terminal of its own (zpty), with compadd wrapped so
# that each match is also printed; the listing itself is not read.
zmodload zsh/zpty || exit 1
zpty shell zsh -f -i
zpty -w shell "fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w shell 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a hits shown
  local i
  if (( $@[(I)-d] )); then shown=("${(@P)${@[$@[(i)-d]+1]}}"); fi
  builtin compadd -A hits "$@"
  builtin compadd "$@"
  for i in {1..$#hits}; do print -r -- "<match>$hits[$i]<shown>$shown[$i]<end>"; done
}'
zpty -w shell 'print "<rea""dy>"'
zpty -r shell line '*<ready>*'
zpty -w -n shell "$2"$'\t'
zpty -w -n shell $'\C-u'
zpty -w shell 'print "<do""ne>"'
while zpty -r shell line; do
  if [[ $line == *'<match>'*'<end>'* ]]; then
    line=${${line#*<match>}%%<end>*}
    print -r -- "${line%%<shown>*}"$'\t'"${line#*<shown>}"
  fi
  [[ $line == *'<done>'* ]] && break
done
zpty -d shell

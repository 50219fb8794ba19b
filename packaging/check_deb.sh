#!/usr/bin/env bash
# Makes the Debian package from build/ (configured and built by the README's test command),
# checks it with lintian (no error and no warning), installs it on this machine with apt-get,
# which must resolve its computed dependencies, and runs what it installed. Run by .ci/run, as
# root, on a machine that may be changed.
set -euo pipefail
cd "$(dirname "$0")/.."

rm -f build/gpusched_*.deb
(cd build && cpack -G DEB >/dev/null)
deb=$(ls build/gpusched_*.deb)

# Debian's own checks of a package: copyright, changelog, description, hardening, modes.
command -v lintian >/dev/null || apt-get install -y --no-install-recommends lintian >/dev/null
lintian --fail-on error,warning --info "$deb"
# Installed-Size counts the links to the binary as links, not as copies of it.
installed_kib=$(dpkg-deb --field "$deb" Installed-Size)
files_kib=$(dpkg-deb --contents "$deb" | awk '{ bytes += $3 } END { print int(bytes / 1024) }')
if [ "$installed_kib" -gt $((files_kib + 64)) ]; then
  echo "check_deb: Installed-Size is $installed_kib KiB for $files_kib KiB of files" >&2
  exit 1
fi

# The package's postinst makes the lease directory now, not at the next boot. --reinstall: on
# a machine where this version is installed already (an earlier run's), apt-get would
# otherwise skip the package, and its postinst with it.
rmdir /run/lock/gpusched 2>/dev/null || true
apt-get install -y --no-install-recommends --reinstall "./$deb"
[ "$(stat -c '%a %U' /run/lock/gpusched)" = "1777 root" ]

/usr/bin/gpusched --version
out=$(echo 'echo from-the-package' | /usr/bin/gpusched --gpus 0 --no-lock 2>/dev/null)
[ "$out" = from-the-package ] || { echo "check_deb: a job from the package printed '$out'" >&2; exit 1; }
out=$(echo 'echo drop-in' | /usr/bin/simple_gpu_scheduler --gpus 0 --no-lock 2>/dev/null)
[ "$out" = drop-in ] || { echo "check_deb: simple_gpu_scheduler printed '$out'" >&2; exit 1; }
[ "$(/usr/bin/simple_hypersearch 'x {a}' -p a 1 2 --sampling-mode grid | wc -l)" = 2 ]

zcat /usr/share/man/man1/gpusched.1.gz | grep -q '^\.SH EXIT STATUS'
# A page per command, as --help lists them, found by man (man gpusched-submit).
commands=$(/usr/bin/gpusched --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
                                           on && /^    [a-z]/ { print $1 }')
[ "$(echo "$commands" | wc -w)" -ge 16 ] || { echo "check_deb: --help lists '$commands'" >&2; exit 1; }
for command in $commands; do
  zcat "/usr/share/man/man1/gpusched-$command.1.gz" | grep -q "^gpusched\\\\-$command \\\\- "
  if command -v man >/dev/null; then
    [ "$(man -w "gpusched-$command")" = "/usr/share/man/man1/gpusched-$command.1.gz" ]
  fi
done
zcat /usr/share/man/man1/simple_hypersearch.1.gz | grep -q '^simple_hypersearch \\- '
zcat /usr/share/man/man1/simple_gpu_scheduler.1.gz | grep -q '^simple_gpu_scheduler \\- '
bash -c 'source /usr/share/bash-completion/completions/gpusched
         COMP_WORDS=(gpusched exec --no-w); COMP_CWORD=2; _gpusched
         [ "${COMPREPLY[*]}" = --no-wait ]'
# bash-completion loads a command's completion from the file of its name.
bash -c 'source /usr/share/bash-completion/completions/simple_hypersearch
         COMP_WORDS=(simple_hypersearch x --sampling-mode ra); COMP_CWORD=3; _simple_hypersearch
         [ "${COMPREPLY[*]}" = random ]'
test -s /usr/share/bash-completion/completions/simple_gpu_scheduler
test -s /usr/share/zsh/vendor-completions/_gpusched
for name in gpusched simple_gpu_scheduler simple_hypersearch; do
  test -s /usr/share/fish/vendor_completions.d/$name.fish
done
test -s /usr/share/doc/gpusched/examples/commands.txt
[ "$(stat -c %a /usr/share/doc/gpusched/examples/commands.txt)" = 644 ]
[ "$(stat -c %a /usr/share/doc/gpusched/examples/fake_train.sh)" = 755 ]
zcat /usr/share/doc/gpusched/changelog.gz | sed -n 1p | grep -q "^gpusched ($(/usr/bin/gpusched --version | awk 'NR == 1 { print $2 }'))"
grep -q '/run/lock/gpusched 1777 root root' /usr/lib/tmpfiles.d/gpusched.conf
grep -q '^ExecStart=/usr/bin/gpusched worker$' /usr/lib/systemd/user/gpusched-worker.service
grep -q '^SuccessExitStatus=143$' /usr/lib/systemd/user/gpusched-worker.service
# Installed elsewhere, the unit names the binary there.
prefix=$(mktemp -d)
cmake --install build --prefix "$prefix/local" >/dev/null
grep -q "^ExecStart=$prefix/local/bin/gpusched worker\$" \
  "$prefix/local/lib/systemd/user/gpusched-worker.service"
rm -rf "$prefix"
echo "check_deb: $deb installs and runs"

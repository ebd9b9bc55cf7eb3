#!/usr/bin/env bash
# The Debian package and the portable tarball of scripts/package.sh (made by
# the deploy_package_build test), installed and run as a user would:
#   1. the .deb: lintian without errors; apt installs it in a fresh Debian 12
#      root (a container of the debootstrap'd base image), --version is the
#      project's version, --once --replay of the installed example prints
#      what the build prints, the man page and unit are where they belong,
#      `systemd-analyze verify` passes on the installed unit, and
#      `apt purge --autoremove` leaves no file behind;
#   2. the tarball: every ELF file in it needs glibc 2.34 at most (RHEL 9)
#      and GCC 11's libstdc++ at most; unpacked under a path with a space in
#      a Debian 13 root from which every library it carries was deleted, it
#      loads each carried library from itself, prints --version and the
#      build's --once --replay, and serves /metrics.
# Usage: package_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
use_background_cleanup # TMP, and one EXIT trap (tests/lib/procs.sh)
BUILD=$(dirname "$(realpath "$AGENT")")
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
DEB=$BUILD/package/gpuq-agent_${VERSION}_amd64.deb
NAME=gpuq-agent-$VERSION-linux-x86_64
TARBALL=$BUILD/package/$NAME.tar.gz
BASE=localhost/debian:bookworm-slim
CONTAINER=gpuq-package-test-$$
ROOT_CACHE=${GPUQ_ROOT_CACHE:-/var/cache/gpuq-roots}
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f s", e - s }'; }
on_exit "podman rm -f $CONTAINER > /dev/null 2>&1"

for f in "$DEB" "$TARBALL"; do
  if [ ! -f "$f" ]; then
    fail "$f missing: the deploy_package_build test (scripts/package.sh) makes it"
    summary
    exit
  fi
done
REPLAY_WANT=$("$AGENT" --once --replay "$SRC/examples/default.gpuqcap" 2>&1)

# --- 1. the Debian package ---------------------------------------------------------
if command -v lintian > /dev/null; then
  # TMPDIR: lintian (2.116) leaves its mldbm-elf-* databases in the temp
  # directory; TMP goes at exit.
  TMPDIR=$TMP run lintian --tag-display-limit 0 "$DEB"
  errors=$(printf '%s\n' "$OUT" | grep -c '^E: ')
  if [ "$errors" = 0 ]; then
    pass "lintian: no errors ($(printf '%s\n' "$OUT" | grep -c '^W: ') warnings)"
  else
    fail "lintian: $errors errors" "$(printf '%s\n' "$OUT" | grep '^E: ')"
  fi
else
  skip "lintian: missing (Debian: lintian)"
fi
run dpkg-deb -f "$DEB" Package Version Depends
if [[ $OUT == *"Version: $VERSION"* && $OUT == *libbpf1* && $OUT == *libprometheus-cpp-pull* ]]; then
  pass "control: version $VERSION, dependencies computed from the binary ($(sed -n 's/^Depends: //p' <<< "$OUT" | tr ',' '\n' | wc -l) packages)"
else
  fail "control fields" "$OUT"
fi

export CONTAINERS_CONF=$SRC/tests/lib/containers.conf
missing=$(missing_of podman runc)
[ "$(id -u)" = 0 ] || missing="$missing root"
if [ -n "$missing" ]; then
  skip "the package in a fresh Debian 12 root: missing $missing (Debian: podman runc)"
elif ! setup=$("$SRC/tests/lib/podman_env.sh" setup 2>&1); then
  skip "the package in a fresh Debian 12 root: $setup"
else
  # Every file of the root but what apt and dpkg keep about themselves.
  cat > "$TMP/files.sh" << 'EOF'
find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /run \
  -o -path /var/lib/apt -o -path /var/cache -o -path /var/log -o -path /var/lib/dpkg \
  -o -path /pkg \) -prune -o -print | sort
EOF
  cat > "$TMP/install.sh" << EOF
set -e
export DEBIAN_FRONTEND=noninteractive
sh /pkg/files.sh > /pkg/before.txt
apt-get update -qq
start=\$(date +%s.%N)
apt-get install -y -qq --no-install-recommends /pkg/$(basename "$DEB") > /pkg/apt.log 2>&1
end=\$(date +%s.%N)
awk -v s=\$start -v e=\$end 'BEGIN { printf "%.1f\n", e - s }' > /pkg/install-seconds
gpuq-agent --version > /pkg/version.txt
gpuq-agent --once --replay /usr/share/gpuq-agent/examples/default.gpuqcap > /pkg/replay.txt 2>&1
gpuq-agent report /usr/share/gpuq-agent/examples/deepseek8.gpuqcap | grep -E '^(GPUs|containers,|hardware|submissions) ' > /pkg/report.txt
ls /usr/share/man/man1/gpuq-agent.1.gz /usr/lib/systemd/system/gpuq-agent.service \
  /usr/lib/gpuq-agent/libgpuq-civetweb-ssl.so /usr/share/gpuq-agent/examples/cnn.gpuqcap \
  /usr/share/gpuq-agent/dashboards/gpuq.json /usr/share/gpuq-agent/web-config.example.yml > /pkg/files-installed.txt
sed -n 's/^ExecStart=//p' /usr/lib/systemd/system/gpuq-agent.service > /pkg/execstart.txt
apt-get purge -y -qq --autoremove gpuq-agent > /pkg/purge.log 2>&1
sh /pkg/files.sh > /pkg/after.txt
EOF
  cp "$DEB" "$TMP/"
  t=$(now)
  if podman run --rm --name "$CONTAINER" -v "$TMP:/pkg" "$BASE" bash /pkg/install.sh > "$TMP/run.log" 2>&1; then
    pass "apt installs $(basename "$DEB") in a fresh Debian 12 root and purges it ($(since "$t") in all; install $(cat "$TMP/install-seconds") s)"
  else
    fail "install in a fresh Debian 12 root" "$(tail -20 "$TMP/run.log"; tail -20 "$TMP/apt.log" 2> /dev/null)"
  fi
  if [ "$(cat "$TMP/version.txt" 2> /dev/null)" != "" ] && grep -q "^gpuq-agent $VERSION " "$TMP/version.txt"; then
    pass "installed --version: $(cat "$TMP/version.txt")"
  else
    fail "installed --version" "$(cat "$TMP/version.txt" 2> /dev/null)"
  fi
  if [ -s "$TMP/replay.txt" ] && [ "$(cat "$TMP/replay.txt")" = "$REPLAY_WANT" ]; then
    pass "installed --once --replay of the installed example == the build's ($(wc -l < "$TMP/replay.txt") lines)"
  else
    fail "installed --once --replay differs from the build's" "$(diff <(printf '%s\n' "$REPLAY_WANT") "$TMP/replay.txt" | head -10)"
  fi
  # The README's package path: its commands, and the lines it shows.
  if readme_has "apt install ./$(basename "$DEB")          # Debian 12: enables and starts gpuq-agent.service" &&
    readme_has "mkdir -p /opt/gpuq-agent && tar -C /opt/gpuq-agent --strip-components=1 -xzf $NAME.tar.gz" &&
    [ "$(readme_output package)" = "$(cat "$TMP/report.txt" 2> /dev/null)" ]; then
    pass "README's package path: the commands for $VERSION and the report it shows are the installed agent's"
  else
    fail "README's package path differs from the installed agent" "$(diff <(readme_output package) "$TMP/report.txt" 2>&1)"
  fi
  if [ "$(wc -l < "$TMP/files-installed.txt" 2> /dev/null)" = 6 ] &&
    [ "$(cat "$TMP/execstart.txt")" = '/usr/bin/gpuq-agent $GPUQ_AGENT_ARGS' ]; then
    pass "man page, unit (ExecStart /usr/bin/gpuq-agent), TLS shims, example captures, dashboard and web config installed"
  else
    fail "installed files" "$(cat "$TMP/files-installed.txt" "$TMP/execstart.txt" 2> /dev/null)"
  fi
  if [ -s "$TMP/before.txt" ] && [ -s "$TMP/after.txt" ] && diff "$TMP/before.txt" "$TMP/after.txt" > "$TMP/left.txt"; then
    pass "apt purge --autoremove leaves no file behind ($(wc -l < "$TMP/before.txt") files before and after)"
  else
    fail "apt purge leaves files behind" "$(head -20 "$TMP/left.txt")"
  fi
  # systemd-analyze verify in the same fresh root, with systemd installed.
  cat > "$TMP/verify.sh" << EOF
set -e
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends systemd /pkg/$(basename "$DEB") > /pkg/apt-verify.log 2>&1
# --man=no: the root has no man-db; the page's presence is checked above.
systemd-analyze verify --man=no gpuq-agent.service
EOF
  if podman run --rm --name "$CONTAINER" -v "$TMP:/pkg" "$BASE" bash /pkg/verify.sh > "$TMP/verify.log" 2>&1; then
    pass "systemd-analyze verify of the installed unit"
  else
    fail "systemd-analyze verify of the installed unit" "$(tail -20 "$TMP/verify.log")"
  fi
fi

# --- 2. the portable tarball -----------------------------------------------------------
mkdir -p "$TMP/unpacked"
tar -C "$TMP/unpacked" -xzf "$TARBALL"
T=$TMP/unpacked/$NAME
over=
elves=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q 'ELF' || continue
  elves=$((elves + 1))
  # The highest version of each family the file asks for.
  for family in GLIBC GLIBCXX CXXABI; do
    max=$(objdump -T "$f" | grep -oE "\(${family}_[0-9.]+\)" | tr -d '()' | sort -V | tail -1)
    case "$family" in GLIBC) limit=GLIBC_2.34 ;; GLIBCXX) limit=GLIBCXX_3.4.29 ;; CXXABI) limit=CXXABI_1.3.13 ;; esac
    [ -n "$max" ] || continue
    [ "$(printf '%s\n%s\n' "$max" "$limit" | sort -V | tail -1)" = "$limit" ] || over="$over ${f#"$T"/}:$max"
  done
done < <(find "$T" -type f -print0)
if [ "$elves" -ge 3 ] && [ -z "$over" ]; then
  pass "tarball: all $elves ELF files need glibc 2.34, GLIBCXX_3.4.29 (GCC 11), CXXABI_1.3.13 at most"
else
  fail "tarball: ELF files over the host baseline ($elves checked)" "$over"
fi
for f in bin/gpuq-agent lib/systemd/system/gpuq-agent.service share/gpuq-agent/examples/default.gpuqcap \
  share/man/man1/gpuq-agent.1.gz lib/gpuq-agent/libgpuq-civetweb-ssl.so share/doc/gpuq-agent/third-party/libcurl4.copyright; do
  [ -e "$T/$f" ] || over="$over missing:$f"
done
if [ -z "$over" ] && grep -qx 'ExecStart=/opt/gpuq-agent/bin/gpuq-agent $GPUQ_AGENT_ARGS' "$T/lib/systemd/system/gpuq-agent.service"; then
  pass "tarball: agent, unit (for /opt/gpuq-agent), examples, man page, TLS shims, carried libraries' licences"
else
  fail "tarball content" "$over $(grep ExecStart "$T/lib/systemd/system/gpuq-agent.service")"
fi

# A Debian 13 root with none of the carried libraries: essential packages
# plus GCC's runtime, every file of a carried soname deleted.
trixie_root() {
  local tarball=$ROOT_CACHE/trixie-essential.tar mirror
  if [ ! -f "$tarball" ]; then
    mkdir -p "$ROOT_CACHE"
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
    mmdebstrap --quiet --format=tar --variant=essential --include=libstdc++6 trixie "$tarball.tmp" \
      "deb ${mirror:-http://deb.debian.org/debian} trixie main" > "$TMP/mmdebstrap.log" 2>&1 || return 1
    mv "$tarball.tmp" "$tarball"
  fi
  mkdir -p "$TMP/trixie" && tar -C "$TMP/trixie" -xf "$tarball"
}
if [ "$(id -u)" != 0 ] || ! command -v mmdebstrap > /dev/null; then
  skip "tarball in a Debian 13 root: needs root and mmdebstrap (Debian: mmdebstrap)"
elif ! trixie_root; then
  fail "mmdebstrap of a Debian 13 root failed" "$(tail -5 "$TMP/mmdebstrap.log")"
else
  R=$TMP/trixie
  deleted=0
  for lib in "$T"/lib/gpuq-agent/*.so*; do
    for d in "$R/usr/lib/x86_64-linux-gnu" "$R/lib/x86_64-linux-gnu"; do
      for hit in "$d/$(basename "$lib")"*; do
        [ -e "$hit" ] || [ -L "$hit" ] || continue
        rm -f "$hit" && deleted=$((deleted + 1))
      done
    done
  done
  mkdir -p "$R/opt/gpuq agent"
  tar -C "$R/opt/gpuq agent" -xzf "$TARBALL"
  A="/opt/gpuq agent/$NAME/bin/gpuq-agent"
  # The root with its own /proc, as a host has it: the loader finds $ORIGIN
  # (the RPATH of the carried libraries) through /proc/self/exe.
  in_root=(unshare --mount --fork -- sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$R")
  run "${in_root[@]}" cat /etc/debian_version
  root_version=$OUT
  run "${in_root[@]}" "$A" --version
  if [ "$RC" = 0 ] && [[ $OUT == "gpuq-agent $VERSION "* ]]; then
    pass "tarball runs in Debian $root_version under a path with a space, $deleted files of carried sonames deleted from the root: $OUT"
  else
    fail "tarball --version in Debian 13 (exit $RC)" "$OUT $ERR"
  fi
  run "${in_root[@]}" ldd "$A"
  outside=$(printf '%s\n' "$OUT" | sed -n 's/^[[:space:]]*\([^ ]*\) => \(.*\) (0x[0-9a-f]*)$/\1 \2/p' |
    grep -v "^[^ ]* /opt/gpuq agent/$NAME/\(bin/\.\./\)\?lib/gpuq-agent/" |
    grep -vE '^(libc|libm|libstdc\+\+|libgcc_s|libresolv)\.so' || true)
  if [ "$RC" = 0 ] && [ -z "$outside" ] && ! grep -q 'not found' <<< "$OUT"; then
    pass "every library but glibc's and GCC's runtime loads from the tarball ($(grep -c '/opt/gpuq agent/' <<< "$OUT") of them)"
  else
    fail "libraries resolved outside the tarball" "$outside $(grep 'not found' <<< "$OUT")"
  fi
  cp "$SRC/examples/default.gpuqcap" "$R/tmp/"
  run "${in_root[@]}" "$A" --once --replay /tmp/default.gpuqcap
  if [ "$RC" = 0 ] && [ "$OUT" = "$REPLAY_WANT" ]; then
    pass "tarball --once --replay == the build's"
  else
    fail "tarball --once --replay differs (exit $RC)" "$(diff <(printf '%s\n' "$REPLAY_WANT") <(printf '%s\n' "$OUT") | head; echo "$ERR")"
  fi
  # The README's way: into /opt/gpuq-agent, where the unit's ExecStart is.
  mkdir -p "$R/opt/gpuq-agent" && tar -C "$R/opt/gpuq-agent" --strip-components=1 -xzf "$TARBALL"
  exec_start=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$R/opt/gpuq-agent/lib/systemd/system/gpuq-agent.service")
  run "${in_root[@]}" sh -c "$exec_start report /opt/gpuq-agent/share/gpuq-agent/examples/deepseek8.gpuqcap | grep -E '^(GPUs|containers,|hardware|submissions) '"
  if [ "$exec_start" = /opt/gpuq-agent/bin/gpuq-agent ] && [ -n "$OUT" ] && [ "$OUT" = "$(readme_output package)" ]; then
    pass "unpacked as the README says, the unit's ExecStart runs and prints the README's report"
  else
    fail "the README's tarball path (ExecStart $exec_start)" "$OUT $ERR"
  fi
  port=$(free_port)
  start_bg "${in_root[@]}" "$A" --replay /tmp/default.gpuqcap --web.listen-address "127.0.0.1:$port" > "$TMP/serve.log" 2>&1
  if wait_http "http://127.0.0.1:$port/metrics" 100 &&
    curl -s "http://127.0.0.1:$port/metrics" | grep -q "^gpuq_build_info{.*version=\"$VERSION\""; then
    pass "tarball agent serves /metrics from the Debian 13 root"
  else
    fail "tarball agent: no /metrics" "$(cat "$TMP/serve.log")"
  fi
fi
summary

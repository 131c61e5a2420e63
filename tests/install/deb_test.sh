#!/bin/bash
# `cpack -G DEB` (issue 28, item 4): the package's control data and contents, then an
# install and a removal with dpkg into a private root (dpkg --root: its own database; the
# maintainer scripts run chrooted there with a copied sh and ldconfig), never the host's.
set -u
build=${1:?usage: deb_test.sh BUILD_DIR}
[ "$(id -u)" -eq 0 ] || { echo "skipped: dpkg --root needs root (chroot for ldconfig)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/vigil-deb.XXXXXX")
fail() { echo "FAIL: $*"; echo "kept $dir"; exit 1; }
(cd "$build" && cpack -G DEB -B "$dir/pkg" >"$dir/cpack.log" 2>&1) || fail "cpack: $(tail -5 "$dir/cpack.log")"
deb=$(ls "$dir"/pkg/vigil_*.deb) || fail "no .deb made"
dpkg-deb -I "$deb" >"$dir/info" || fail "dpkg-deb -I"
grep -q '^ Package: vigil$' "$dir/info" || fail "package name: $(cat "$dir/info")"
grep -q '^ Depends:.*libjansson' "$dir/info" || fail "no shared-library dependencies: $(cat "$dir/info")"
dpkg-deb -c "$deb" | awk '{print $6}' >"$dir/contents"
for f in ./usr/bin/vigil ./usr/bin/vigil-full ./usr/bin/vigild ./usr/include/vigil/vigil.h ./usr/share/man/man1/vigil.1 \
	./usr/share/man/man1/vigil-record.1 ./usr/lib/systemd/system/vigild.service \
	./usr/share/bash-completion/completions/vigil ./usr/lib/python3/dist-packages/vigil/__init__.py; do
	grep -qx "$f" "$dir/contents" || fail "$f is not in the package"
done
grep -q '^./usr/lib/.*libvigil\.so\.0$' "$dir/contents" || fail "no libvigil.so.0 in the package"
grep -q '^./usr/lib/.*pkgconfig/vigil\.pc$' "$dir/contents" || fail "no vigil.pc in the package"

# A private root: dpkg's database, and what the postinst/postrm (ldconfig) need inside.
root=$dir/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/bin" "$root/sbin" "$root/etc" \
	"$root/usr/bin" "$root/tmp"
: >"$root/var/lib/dpkg/status"
: >"$root/etc/ld.so.conf"
cp /bin/dash "$root/bin/sh"
cp "$(command -v ldconfig)" "$root/sbin/ldconfig"
for lib in $(ldd /bin/dash | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
dpkg --root="$root" --force-depends -i "$deb" >"$dir/install.log" 2>&1 ||
	fail "dpkg -i: $(tail -5 "$dir/install.log")"
dpkg --root="$root" -s vigil 2>/dev/null | grep -q '^Status: install ok installed' ||
	fail "dpkg does not list vigil as installed"
"$root/usr/bin/vigil" --version | grep -q '^vigil ' || fail "the installed vigil does not run"
PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -c \
	'import vigil, sys; sys.exit(vigil.library_version() == "" )' ||
	fail "the packaged Python module does not load its library"
dpkg --root="$root" -r vigil >"$dir/remove.log" 2>&1 || fail "dpkg -r: $(tail -5 "$dir/remove.log")"
left=$(cd "$root" && find usr -type f -o -type l 2>/dev/null | grep -i vigil)
[ -z "$left" ] || fail "left after removal: $left"
echo "ok: $(basename "$deb"): $(wc -l <"$dir/contents") entries; installed and removed cleanly in a private root"
rm -rf "$dir"

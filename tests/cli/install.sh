#!/usr/bin/env bash
# `make install` (meson install) puts the binary, the man page and the three completions where
# the shells and man look for them, under the chosen prefix.
source "$(dirname "$0")/lib.sh"

: "${BUILD_DIR:?set BUILD_DIR to the meson build directory}"
meson install -C "$BUILD_DIR" --no-rebuild --destdir "$WORK/root" --quiet > install.log 2>&1 ||
  fail "meson install failed: $(cat install.log)"
prefix=$(meson introspect "$BUILD_DIR" --buildoptions |
  python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
root="$WORK/root$prefix"

[ -x "$root/bin/keyshard" ] || fail "no $root/bin/keyshard"
"$root/bin/keyshard" --version | grep -q '^keyshard ' || fail "the installed binary does not run"
pass "binary"

[ -f "$root/share/man/man1/keyshard.1" ] || fail "no man page in share/man/man1"
if command -v man > /dev/null; then
  MANPATH="$root/share/man" man -P cat keyshard 2>/dev/null | grep -q 'keyshard' ||
    fail "man does not find the installed page"
fi
pass "man page"

# bash-completion looks in <datadir>/bash-completion/completions/<command>.
[ -f "$root/share/bash-completion/completions/keyshard" ] || fail "no bash completion"
bash -c "source '$root/share/bash-completion/completions/keyshard' && complete -p keyshard" \
  > /dev/null || fail "the bash completion does not register"
# zsh looks in <datadir>/zsh/site-functions (in fpath for /usr/local and /usr).
[ -f "$root/share/zsh/site-functions/_keyshard" ] || fail "no zsh completion"
if command -v zsh > /dev/null; then
  zsh -fc "fpath=('$root/share/zsh/site-functions' \$fpath); autoload -Uz compinit; compinit -u -d '$WORK/zcompdump'; (( \${+_comps[keyshard]} ))" ||
    fail "zsh does not bind the completion to keyshard"
fi
# fish looks in <datadir>/fish/vendor_completions.d of every XDG data directory, for a command
# it finds on PATH.
[ -f "$root/share/fish/vendor_completions.d/keyshard.fish" ] || fail "no fish completion"
if command -v fish > /dev/null; then
  PATH="$root/bin:$PATH" XDG_DATA_DIRS="$root/share:/usr/share" fish -c "complete -C'keyshard spl'" |
    grep -q '^split' || fail "fish does not complete from the installed file"
fi
pass "completions where bash, zsh and fish look"

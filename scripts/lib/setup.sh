# shellcheck shell=bash
# Shared set-up for scripts/serve and scripts/test: installs what Watermark's build and tests
# need, skipping each tool that is already there at the right version, and fails with a message
# a person can act on when something cannot be installed.
#
# Everything comes from a package registry: Rust tools through `cargo install` (crates.io),
# wasm-opt and Playwright through `npm ci` (npm), Chromium from Debian through apt. Trunk runs
# with `offline = true` (Trunk.toml), so it never downloads a tool of its own.
#
# Source this file; then call wm_setup_build (serve and test) and wm_setup_browser (test only).

# The one place where Trunk's version is pinned. 0.22.x needs a newer rustc than 1.95.
WM_TRUNK_VERSION=0.21.14

WM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WM_TESTS_DIR="$WM_ROOT/tests"
export DEBIAN_FRONTEND=noninteractive

wm_say() { printf '==> %s\n' "$*"; }
wm_die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# Put cargo's and npm's tool folders first on PATH: the npm binaryen's wasm-opt must win over
# any other wasm-opt (Debian's binaryen 108 builds a page that crashes at load).
wm_path_setup() {
  local cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
  case ":$PATH:" in
    *":$cargo_bin:"*) ;;
    *) PATH="$cargo_bin:$PATH" ;;
  esac
  PATH="$WM_TESTS_DIR/node_modules/.bin:$PATH"
  export PATH
}

wm_require() {
  local cmd=$1 hint=$2
  command -v "$cmd" >/dev/null 2>&1 || wm_die "'$cmd' is not installed. $hint"
}

# Run a command as root: directly when we are root, through sudo otherwise.
wm_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    wm_die "need root to run '$*' (no sudo found): run it yourself, then re-run this script."
  fi
}

# The version Cargo.lock resolves for a crate, e.g. `wm_lock_version wasm-bindgen` -> 0.2.130.
# Fails when the crate is missing or locked at more than one version.
wm_lock_version() {
  local name=$1 versions
  versions=$(awk -v want="name = \"$name\"" '
    $0 == want { found = 1; next }
    found && /^version = / { gsub(/version = |"/, ""); print; found = 0 }
  ' "$WM_ROOT/Cargo.lock" | sort -u)
  [ -n "$versions" ] || wm_die "Cargo.lock has no '$name' package."
  [ "$(printf '%s\n' "$versions" | wc -l)" -eq 1 ] ||
    wm_die "Cargo.lock has several versions of '$name' ($(tr "\n" " " <<<"$versions")): pin one."
  printf '%s\n' "$versions"
}

# True when `$1 --version` prints a line containing the word $2 (e.g. `trunk 0.21.14`).
wm_has_version() {
  local cmd=$1 version=$2
  command -v "$cmd" >/dev/null 2>&1 || return 1
  "$cmd" --version 2>/dev/null | grep -qE "(^|[^0-9.])${version//./\\.}([^0-9.]|$)"
}

wm_check_base_tools() {
  wm_require cargo "Install Rust 1.95 or newer with rustup, then re-run."
  wm_require rustc "Install Rust 1.95 or newer with rustup, then re-run."
  wm_require node "Install Node.js 20 or newer, then re-run."
  wm_require npm "Install npm (it comes with Node.js 20 or newer), then re-run."
  local node_major
  node_major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$node_major" -ge 20 ] || wm_die "Node.js $(node --version) is too old: Watermark needs Node.js 20 or newer."
}

wm_ensure_wasm_target() {
  local target=wasm32-unknown-unknown
  if command -v rustup >/dev/null 2>&1; then
    if rustup target list --installed | grep -qx "$target"; then
      wm_say "rust target $target: present"
    else
      wm_say "rust target $target: installing"
      rustup target add "$target"
    fi
  elif [ -d "$(rustc --print sysroot)/lib/rustlib/$target" ]; then
    wm_say "rust target $target: present"
  else
    wm_die "the Rust target $target is missing and rustup is not installed to add it."
  fi
}

# wm_ensure_cargo_tool BIN VERSION CRATE [extra cargo install args...]
wm_ensure_cargo_tool() {
  local bin=$1 version=$2 crate=$3
  shift 3
  if wm_has_version "$bin" "$version"; then
    wm_say "$bin $version: present"
    return
  fi
  wm_say "$bin $version: installing with cargo install $crate $version (takes minutes when cold)"
  cargo install "$crate" --version "$version" "$@" ||
    wm_die "cargo install $crate --version $version failed (see above)."
  wm_has_version "$bin" "$version" ||
    wm_die "after installing $crate $version, '$bin --version' says: $("$bin" --version 2>&1 | head -n1)"
}

wm_ensure_trunk() {
  wm_ensure_cargo_tool trunk "$WM_TRUNK_VERSION" trunk --locked
}

# wasm-bindgen-cli must equal the wasm-bindgen that Cargo.lock resolves, exactly. It brings
# `wasm-bindgen` (used by Trunk) and `wasm-bindgen-test-runner` (used by the wasm tests).
wm_ensure_wasm_bindgen_cli() {
  local version
  version=$(wm_lock_version wasm-bindgen)
  # No --locked: the lock file shipped with wasm-bindgen-cli names a crate version that the
  # registry no longer has, so a locked install fails.
  wm_ensure_cargo_tool wasm-bindgen "$version" wasm-bindgen-cli
  wm_has_version wasm-bindgen-test-runner "$version" ||
    wm_die "wasm-bindgen-test-runner is not at $version: run 'cargo install wasm-bindgen-cli --version $version --force'."
}

# npm dependencies of tests/ (Playwright's driver, and binaryen for wasm-opt), installed with
# `npm ci` from the committed package-lock.json. A stamp holding the lock file's hash lets a
# warm run skip the reinstall.
wm_ensure_npm_deps() {
  local lock="$WM_TESTS_DIR/package-lock.json" stamp="$WM_TESTS_DIR/node_modules/.watermark-lock.sha256"
  [ -f "$lock" ] || wm_die "tests/package-lock.json is missing: it must be committed."
  local want
  want=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    wm_say "npm packages in tests/: present (package-lock.json unchanged)"
    return
  fi
  wm_say "npm packages in tests/: installing with npm ci"
  (cd "$WM_TESTS_DIR" && npm ci --no-audit --no-fund) || wm_die "npm ci in tests/ failed (see above)."
  printf '%s\n' "$want" >"$stamp"
}

# Trunk.toml's [tools] wasm_opt says which binaryen release Trunk accepts; the npm binaryen in
# tests/node_modules/.bin must be that release.
wm_check_wasm_opt() {
  local want
  want=$(sed -n 's/^wasm_opt *= *"\(version_[0-9]*\)".*/\1/p' "$WM_ROOT/Trunk.toml")
  [ -n "$want" ] || wm_die "Trunk.toml has no [tools] wasm_opt = \"version_N\" line."
  local have
  have=$(command -v wasm-opt) || wm_die "wasm-opt is missing: tests/package.json should bring it (npm binaryen)."
  [ "$have" = "$WM_TESTS_DIR/node_modules/.bin/wasm-opt" ] ||
    wm_die "the wasm-opt on PATH is $have, not the npm one in tests/node_modules/.bin."
  wm_has_version wasm-opt "$want" ||
    wm_die "wasm-opt says '$(wasm-opt --version)' but Trunk.toml wants $want: make the binaryen version in tests/package.json match."
  wm_say "wasm-opt $want: present (npm binaryen)"
}

# Trunk runs cargo with --offline, so every crate must be in cargo's cache first.
wm_cargo_fetch() {
  wm_say "cargo fetch"
  (cd "$WM_ROOT" && cargo fetch --quiet) || wm_die "cargo fetch failed (see above)."
}

# What scripts/serve and scripts/test both need: the tools to build the playground.
wm_setup_build() {
  wm_path_setup
  wm_check_base_tools
  wm_ensure_npm_deps
  wm_check_wasm_opt
  wm_ensure_wasm_target
  wm_ensure_trunk
  wm_ensure_wasm_bindgen_cli
  wm_cargo_fetch
}

# Debian's Chromium and chromedriver, for the browser tests.
WM_CHROMIUM=${WM_CHROMIUM:-/usr/bin/chromium}
wm_setup_browser() {
  local missing=() pkg
  if command -v dpkg-query >/dev/null 2>&1; then
    for pkg in chromium chromium-driver; do
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 ||
      wm_die "${missing[*]} missing and apt-get is not available: install Chromium yourself and set WM_CHROMIUM to its path."
    wm_say "installing ${missing[*]} from Debian"
    wm_as_root apt-get update -qq || wm_die "apt-get update failed (see above)."
    wm_as_root apt-get install -y -qq "${missing[@]}" || wm_die "apt-get install ${missing[*]} failed (see above)."
  fi
  [ -x "$WM_CHROMIUM" ] || wm_die "no Chromium at $WM_CHROMIUM."
  wm_say "chromium: $("$WM_CHROMIUM" --version 2>/dev/null | head -n1)"
  export WM_CHROMIUM
}

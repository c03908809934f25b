#!/usr/bin/env bash
# Build the project's test environment (.venv in the repository root) from nothing.
#
#   bash tools/setup_env.sh [--python PY] [--vllm-version 0.34.0] [--system-site-packages] [--force]
#
# Steps (each is skipped when already done, so a second run takes seconds):
#   1. python -m venv .venv                 (recreated if the interpreter version or the
#                                            --system-site-packages choice changed)
#   2. upgrade pip inside the venv
#   3. pip install torch==2.13.0            (the CPU build; skipped with --system-site-packages
#                                            when torch is already importable: the ROCm-image
#                                            mode, where torch, vllm and aiter come with the image)
#   4. vLLM: the wheel pinned in requirements/vllm-releases.lock.json, downloaded and
#      sha256-verified by tools/fetch_vllm.py, installed with --no-deps, plus the minimal
#      pins in requirements/vllm-<version>-runtime.txt (also --no-deps).  In image mode an
#      importable vllm from the image is used instead.
#   5. pip install -e '.[test]'             (the project itself, with its test extra)
#   6. the vLLM release sources the tests read (every version in the lock file) via
#      tools/fetch_vllm.py --all into <cache>/vllm-src/ (<cache>: $VLLM_GUARD_CACHE, else
#      ~/.cache/vllm-rocm-mla-guard, as factories/testing/releases.py decides) - started in the background right
#      after step 2 so that the downloads overlap with the pip installs.
#
# Progress lines start with "[setup]"; the last line says what was installed.
# Package indexes come from pip's configuration (nothing is hard-coded here).
# --force ignores the step stamps kept in .venv/.setup_env/ (the venv itself is kept).
set -euo pipefail

T_START=$SECONDS
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

PY=python3
VLLM_VERSION=0.34.0
SYSTEM_SITE=0
FORCE=0
TORCH_SPEC="torch==2.13.0"
VENV="$REPO_ROOT/.venv"
VPY="$VENV/bin/python"
STAMPS="$VENV/.setup_env"
LOCK="requirements/vllm-releases.lock.json"

usage() { sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
log() { printf '[setup] %4ss  %s\n' "+$((SECONDS - T_START))" "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --python) [ $# -ge 2 ] || die "--python needs a value"; PY="$2"; shift 2 ;;
        --python=*) PY="${1#*=}"; shift ;;
        --vllm-version) [ $# -ge 2 ] || die "--vllm-version needs a value"; VLLM_VERSION="$2"; shift 2 ;;
        --vllm-version=*) VLLM_VERSION="${1#*=}"; shift ;;
        --system-site-packages) SYSTEM_SITE=1; shift ;;
        --force) FORCE=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

RUNTIME_REQ="requirements/vllm-${VLLM_VERSION}-runtime.txt"

[ -f pyproject.toml ] || die "pyproject.toml not found in $REPO_ROOT: cannot install the project ('.[test]')"
command -v "$PY" >/dev/null 2>&1 || die "interpreter not found: $PY (use --python)"
PY_VER="$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')" \
    || die "cannot run $PY"
"$PY" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 12)))' \
    || log "warning: Python $PY_VER is outside the supported 3.10-3.12 range"
CACHE="$("$PY" tools/fetch_vllm.py --print-cache-dir)"  # factories/locations.py decides (stdlib only)

# ---------------------------------------------------------------- helpers
stamp_ok() {  # stamp_ok NAME KEY: the step NAME already ran with inputs KEY
    [ "$FORCE" = 0 ] && [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]
}
stamp_set() { mkdir -p "$STAMPS"; printf '%s' "$2" > "$STAMPS/$1"; }
file_key() { sha256sum "$1" | cut -d' ' -f1; }
pip_install() { "$VPY" -m pip install --disable-pip-version-check "$@"; }
# prints the installed version of a distribution visible to the venv, or nothing
dist_version() {
    "$VPY" - "$1" <<'EOF' 2>/dev/null || true
import importlib.metadata as md, sys
try:
    print(md.version(sys.argv[1]))
except md.PackageNotFoundError:
    pass
EOF
}
has_module() { "$VPY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)' "$1"; }

FETCH_PID=""
FETCH_LOG="$CACHE/fetch_vllm.log"
cleanup() {
    if [ -n "$FETCH_PID" ] && kill -0 "$FETCH_PID" 2>/dev/null; then
        kill "$FETCH_PID" 2>/dev/null || true
        wait "$FETCH_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- 1. venv
want_sys=false; [ "$SYSTEM_SITE" = 1 ] && want_sys=true
if [ -x "$VPY" ] && [ -f "$VENV/pyvenv.cfg" ]; then
    have_ver="$("$VPY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || echo broken)"
    have_sys="$(sed -n 's/^include-system-site-packages *= *//p' "$VENV/pyvenv.cfg" | tr -d '[:space:]')"
    if [ "$have_ver" != "$PY_VER" ] || [ "$have_sys" != "$want_sys" ]; then
        log "existing .venv (Python $have_ver, system-site-packages=$have_sys) does not match" \
            "(Python $PY_VER, system-site-packages=$want_sys): recreating it"
        rm -rf "$VENV"
    fi
elif [ -e "$VENV" ]; then
    log "incomplete .venv found: recreating it"
    rm -rf "$VENV"
fi
if [ ! -x "$VPY" ]; then
    log "creating .venv with $PY (Python $PY_VER, system-site-packages=$want_sys)"
    venv_args=()
    [ "$SYSTEM_SITE" = 1 ] && venv_args+=(--system-site-packages)
    "$PY" -m venv ${venv_args[@]+"${venv_args[@]}"} "$VENV"
else
    log ".venv exists (Python $PY_VER, system-site-packages=$want_sys)"
fi

# ---------------------------------------------------------------- 2. pip
if stamp_ok pip "$PY_VER"; then
    log "pip already upgraded ($(dist_version pip))"
else
    log "upgrading pip"
    pip_install -q --upgrade pip
    stamp_set pip "$PY_VER"
fi

# ---------------------------------------------------------------- image mode?
# With --system-site-packages and a torch outside the venv (a ROCm image), torch - and vllm,
# when the image has it - are used as they are.
IMAGE_MODE=0
VLLM_FROM_IMAGE=0
torch_ver="$(dist_version torch)"
if [ "$SYSTEM_SITE" = 1 ] && [ -n "$torch_ver" ] && has_module torch \
        && [ ! -d "$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch" ]; then
    IMAGE_MODE=1
    vllm_ver="$(dist_version vllm)"
    if [ -n "$vllm_ver" ] && has_module vllm; then VLLM_FROM_IMAGE=1; fi
fi

if [ "$VLLM_FROM_IMAGE" = 0 ]; then
    [ -f "$RUNTIME_REQ" ] || die "$RUNTIME_REQ not found: no runtime pins for vLLM $VLLM_VERSION"
    # fail early (before any large download) if the locked wheel cannot go into this Python
    "$VPY" - "$LOCK" "$VLLM_VERSION" <<'EOF' || exit 1
import json, platform, sys
from pip._vendor.packaging.specifiers import SpecifierSet
lock, version = sys.argv[1], sys.argv[2]
rel = json.load(open(lock))["releases"].get(version)
wheel = ((rel or {}).get("wheels") or {}).get(platform.machine())
if wheel is None:
    sys.exit(f"[setup] error: {lock} has no {platform.machine()} wheel for vLLM {version}")
rp = wheel.get("requires_python")
here = "%d.%d.%d" % sys.version_info[:3]
if rp and here not in SpecifierSet(rp):
    sys.exit(f"[setup] error: the vLLM {version} wheel requires Python {rp}; this venv has "
             f"{here} (rerun with --python python3.11 or python3.12)")
EOF
fi

# ---------------------------------------------------------------- 6 (background). sources
mkdir -p "$CACHE"
log "fetching the vLLM release sources in the background (log: ${FETCH_LOG#"$REPO_ROOT"/})"
"$VPY" tools/fetch_vllm.py --all --cache "$CACHE" >"$FETCH_LOG" 2>&1 &
FETCH_PID=$!

# ---------------------------------------------------------------- 3. torch
if [ "$IMAGE_MODE" = 1 ]; then
    log "torch $torch_ver comes from the system site-packages: image mode, not installing torch"
elif [[ -n "$torch_ver" && "${torch_ver%%+*}" == "${TORCH_SPEC#torch==}" ]]; then
    log "torch $torch_ver already installed"
else
    log "installing $TORCH_SPEC"
    pip_install -q "$TORCH_SPEC"
fi

# ---------------------------------------------------------------- 4. vLLM
if [ "$VLLM_FROM_IMAGE" = 1 ]; then
    log "vllm $vllm_ver comes from the image: not installing the wheel or $RUNTIME_REQ"
    [ "$vllm_ver" = "$VLLM_VERSION" ] \
        || log "warning: the image has vllm $vllm_ver, not the requested $VLLM_VERSION"
    VLLM_HOW="vllm $vllm_ver (image)"
else
    # installed vllm counts only if it came from the locked wheel (pip records its hash)
    installed_ok="$("$VPY" - "$LOCK" "$VLLM_VERSION" <<'EOF' 2>/dev/null || true
import importlib.metadata as md, json, platform, sys
lock, version = sys.argv[1], sys.argv[2]
want = json.load(open(lock))["releases"][version]["wheels"][platform.machine()]["sha256"]
d = md.distribution("vllm")
info = json.loads(d.read_text("direct_url.json") or "{}").get("archive_info", {})
hashes = dict(info.get("hashes") or {})
if info.get("hash", "").startswith("sha256="):
    hashes.setdefault("sha256", info["hash"][len("sha256="):])
print("yes" if d.version == version and hashes.get("sha256") == want else "no")
EOF
)"
    if [ "$installed_ok" = yes ]; then
        log "vllm $VLLM_VERSION already installed from the verified wheel"
    else
        log "fetching the verified vLLM $VLLM_VERSION wheel"
        wheel="$("$VPY" tools/fetch_vllm.py --wheel-only --cache "$CACHE" "$VLLM_VERSION" | tail -n 1)" \
            || die "could not fetch the vLLM $VLLM_VERSION wheel (see the fetch_vllm line above)"
        [ -f "$wheel" ] || die "tools/fetch_vllm.py returned no wheel"
        log "installing ${wheel#"$REPO_ROOT"/} (--no-deps)"
        pip_install -q --no-deps --force-reinstall "$wheel"
    fi
    key="$(file_key "$RUNTIME_REQ")"
    if stamp_ok runtime "$key"; then
        log "runtime requirements already installed ($RUNTIME_REQ)"
    else
        log "installing $RUNTIME_REQ (--no-deps)"
        pip_install -q --no-deps -r "$RUNTIME_REQ"
        stamp_set runtime "$key"
    fi
    VLLM_HOW="vllm $VLLM_VERSION (verified wheel, --no-deps) + $(grep -cEv '^[[:space:]]*(#|$)' "$RUNTIME_REQ") runtime pins"
fi

# ---------------------------------------------------------------- 5. the project
key="$(file_key pyproject.toml)"
if stamp_ok project "$key"; then
    log "project already installed (pip install -e '.[test]')"
else
    log "installing the project: pip install -e '.[test]'"
    pip_install -q -e '.[test]'
    stamp_set project "$key"
fi

# ---------------------------------------------------------------- 6 (join). sources
log "waiting for the vLLM release sources"
if ! wait "$FETCH_PID"; then
    FETCH_PID=""
    sed 's/^/    /' "$FETCH_LOG" >&2
    die "tools/fetch_vllm.py --all failed (log above and in ${FETCH_LOG#"$REPO_ROOT"/})"
fi
FETCH_PID=""
grep '^\[fetch_vllm\] vllm .*: \(sources already\|fetching\)\|extracted' "$FETCH_LOG" | sed 's/^/    /' || true
src_versions="$(ls "$CACHE/vllm-src" | sort -V | tr '\n' ' ')"

# ---------------------------------------------------------------- summary
summary="$("$VPY" - <<'EOF'
import importlib.metadata as md, sys
def v(name):
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return "missing"
extra = ""
try:
    import tomllib
    with open("pyproject.toml", "rb") as fh:
        name = tomllib.load(fh).get("project", {}).get("name")
    if name:
        extra = f" | {name} {v(name)} (editable, [test])"
except Exception:
    pass
print(f"Python {'%d.%d.%d' % sys.version_info[:3]} | torch {v('torch')}{extra}")
EOF
)"
log "done in $((SECONDS - T_START))s: .venv: $summary | $VLLM_HOW | vLLM sources ${src_versions% } in ${CACHE#"$REPO_ROOT"/}/vllm-src"

#!/usr/bin/env bash
# What a bare GPU grading machine lacks (docs/deploy.md, "A GPU grading machine"), gathered on a Debian machine
# that reaches the package registries and set up on the GPU machine, which reaches none:
#   scripts/gpu_carry.sh fetch [DIR]     here: the project's Python dependencies as wheels for Python 3.12 (less
#                                        what the GPU image has), and Debian's PostgreSQL server with the libraries
#                                        it links: the .deb files unpacked (dpkg -x), less what a throwaway cluster
#                                        never reads (translations, docs, JIT bitcode, client programs), in
#                                        DIR/pg.tar.xz; DIR defaults to .carry-gpu (git-ignored)
#   scripts/gpu_carry.sh install [DIR]   there: pip installs what is missing from the wheels, and unpacks the
#                                        server into DIR/pg (no apt needed); prints PostgreSQL's bin folder
# benchmarks/gpu_distributed.py --pg-root DIR/pg then runs PostgreSQL from there (LD_LIBRARY_PATH), as a
# throwaway cluster owned by an unprivileged user.
set -euo pipefail
action="${1:?usage: scripts/gpu_carry.sh fetch|install [DIR]}"
dir="${2:-.carry-gpu}"
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
# In the lent H200's image (its package list of 2026-11-17): not carried, the carry's room being 64 MiB.
present="anyio annotated_doc attrs certifi charset_normalizer click h11 httpcore httpx hypothesis idna iniconfig jinja2
  markdown_it_py markupsafe mdurl packaging pluggy pygments pytest python_dateutil pyyaml requests rich six
  sortedcontainers urllib3"

# The project's dependencies (pyproject.toml) for a GPU grading machine: not the image's torch and NumPy, not
# Docker's client (no Docker there), uvicorn without its optional speed-ups.
requirements() {
  "$python" - "$root/pyproject.toml" <<'EOF'
import re, sys, tomllib
deps = tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]
keep = [d for d in deps if re.split(r"[\[<>=!~ ]", d)[0] not in ("torch", "numpy", "docker")]
print("\n".join(d.replace("uvicorn[standard]", "uvicorn") for d in keep))
EOF
}

case "$action" in
  fetch)
    mkdir -p "$dir/wheels"
    requirements >"$dir/requirements.txt"
    "$python" -m pip download --quiet --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
      --platform manylinux_2_34_x86_64 -d "$dir/wheels" -r "$dir/requirements.txt"
    for name in $present; do rm -f "$dir/wheels/$name"-[0-9]*.whl; done
    bindir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
    [ -x "$bindir/postgres" ] || { echo "gpu_carry.sh: fetch reads PostgreSQL's libraries from an installed server" \
                                        "(apt-get install postgresql)" >&2; exit 1; }
    # The server's package and the package of every library its programs link (the paths ldd prints, or their
    # /usr-merged twins, through dpkg -S), less the C library's and those the image's Python links itself.
    libs="$(ldd "$bindir"/{postgres,initdb,pg_ctl} | grep -o '=> /[^ ]*' | cut -c4- | sort -u)"
    packages="$(for lib in $libs; do dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null \
                || dpkg -S "$(readlink -f "$lib")" 2>/dev/null; done | cut -d: -f1 | sort -u \
                | grep -v -x -e libc6 -e libgcc-s1 -e libstdc++6 -e libssl3 -e zlib1g -e libffi8 -e liblzma5)"
    server="$(dpkg -S "$bindir/postgres" | cut -d: -f1)"
    debs="$(mktemp -d)"
    (cd "$debs" && apt-get download -q $server $packages >/dev/null 2>&1)
    ls "$debs" >"$dir/debs.txt"
    mkdir "$debs/root"
    for deb in "$debs"/*.deb; do dpkg -x "$deb" "$debs/root"; done
    rm -rf "$debs"/root/usr/share/{locale,doc,man,lintian} "$debs"/root/usr/lib/postgresql/*/lib/{bitcode,llvmjit*}
    find "$debs"/root/usr/lib/postgresql/*/bin -type f ! -name postgres ! -name initdb ! -name pg_ctl -delete
    tar -cJf "$dir/pg.tar.xz" -C "$debs/root" .
    rm -rf "$debs"
    du -sh "$dir/wheels" "$dir/pg.tar.xz"
    ;;
  install)
    # The image's Python is the system's: pip may call it externally managed (PEP 668) and is told to go ahead.
    # A requirement that the image holds in too old a version and that was not carried: every wheel, as it is.
    export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore
    "$python" -m pip install --quiet --no-index --find-links "$dir/wheels" -r "$dir/requirements.txt" >&2 ||
      "$python" -m pip install --quiet --no-index --no-deps "$dir"/wheels/*.whl >&2
    rm -rf "$dir/pg" && mkdir -p "$dir/pg"
    tar -xJf "$dir/pg.tar.xz" -C "$dir/pg"
    chmod -R a+rX "$dir/pg"
    ls -d "$(cd "$dir/pg" && pwd)"/usr/lib/postgresql/*/bin | sort -V | tail -1
    ;;
  *) echo "usage: scripts/gpu_carry.sh fetch|install [DIR]" >&2; exit 2 ;;
esac

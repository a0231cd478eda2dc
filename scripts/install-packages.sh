# install-packages.sh - sourced by bootstrap.sh and fuzz.sh:
# install_packages WHO PACKAGE... installs the Debian packages not yet
# installed (apt-get, with sudo unless root), saying so as WHO.
install_packages() {
    local who=$1 p missing=() sudo=()
    shift
    for p in "$@"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    echo "$who: installing ${missing[*]}" >&2
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

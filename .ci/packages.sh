# .ci/packages.sh: sourced by .ci/test, .ci/whatif and .ci/run (not run on its own).
#
#   perfcast_need_packages WHAT PACKAGE...
#
# Makes sure the Debian packages are installed. Missing ones are installed with apt-get (as root,
# or through sudo); when that is not possible it names them, says how to install them, and
# returns 1. WHAT says what they are for, in the messages.
# Environment:
#   PERFCAST_NO_INSTALL=1     never install: name what is missing and return 1
#   PERFCAST_CI_SKIP_DEPS=1   never install: name what is missing and carry on (return 0)

perfcast_need_packages() {
    local what=$1
    shift
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "perfcast: no dpkg here (not Debian?); not checking the packages for $what: $*" >&2
        return 0
    fi
    local missing=() p
    for p in "$@"; do
        # "install ok installed": the package is installed, not just known or half-removed.
        if [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != "install ok installed" ]]; then
            missing+=("$p")
        fi
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        echo "perfcast: packages for $what present: $*"
        return 0
    fi
    local hint="apt-get update && apt-get install ${missing[*]}"
    if [[ ${PERFCAST_CI_SKIP_DEPS:-0} == 1 ]]; then
        echo "perfcast: missing for $what, not installed (PERFCAST_CI_SKIP_DEPS=1): ${missing[*]}" >&2
        return 0
    fi
    if [[ ${PERFCAST_NO_INSTALL:-0} == 1 ]]; then
        echo "perfcast: missing Debian packages for $what: ${missing[*]}" >&2
        echo "perfcast: install them as root with: $hint" >&2
        return 1
    fi
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "perfcast: missing Debian packages for $what: ${missing[*]}" >&2
            echo "perfcast: not root and no sudo; as root run: $hint" >&2
            return 1
        fi
    fi
    echo "perfcast: installing for $what: ${missing[*]}"
    if ! "${sudo[@]}" apt-get update ||
        ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${missing[@]}"; then
        echo "perfcast: could not install the Debian packages for $what: ${missing[*]}" >&2
        echo "perfcast: install them as root with: $hint" >&2
        return 1
    fi
}

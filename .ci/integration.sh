#!/usr/bin/env bash
# The integration tier: a private Docker engine, a locally built base image, the compose v2
# plugin and Harbor in its own Python 3.12 venv. Idempotent (safe to run twice); prints
# timings. Writes only $WORK (default .ci/work, git-ignored), /run/evalkit-* (the engine's
# socket and runtime dir) and a download cache $CACHE (default /var/cache/evalkit-ci: the
# base image's root filesystem tarball and the compose .deb, so a fresh clone on the same
# machine skips debootstrap), plus the Debian packages docker.io and debootstrap. System apt
# sources are never touched.
#
#   bash .ci/integration.sh up     # set up / reuse, start dockerd, write $WORK/integration.env
#   bash .ci/integration.sh down   # remove our containers, stop dockerd by its PID
#   bash .ci/integration.sh env    # print the env file path
#
# Then: set -a; . .ci/work/integration.env; set +a
#       EVALKIT_INTEGRATION=1 .venv/bin/python -m pytest -m integration tests/integration
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${EVALKIT_CI_WORK:-$ROOT/.ci/work}
HARBOR_VERSION=${EVALKIT_HARBOR_VERSION:-0.26.0}
PY312=${EVALKIT_PY312:-/root/.pyenv/versions/3.12.1/bin/python3.12}
BASE_IMAGE=evalkit/base:local
MIRROR=${EVALKIT_DEBIAN_MIRROR:-}
CACHE=${EVALKIT_CI_CACHE:-/var/cache/evalkit-ci}
# unix socket paths are limited to ~108 bytes: keep the engine's runtime dir short
RUNDIR=/run/evalkit-$(printf '%s' "$WORK" | sha1sum | cut -c1-10)
SOCK=$RUNDIR/docker.sock
PIDFILE=$RUNDIR/dockerd.pid
ENVFILE=$WORK/integration.env

export DOCKER_HOST=unix://$SOCK
export DOCKER_CONFIG=$WORK/docker-config

ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { local d=$(($(ms) - $1)); printf '%d.%01d' $((d / 1000)) $((d % 1000 / 100)); }
T0=$(ms)
step() { STEP_NAME=$1; STEP_T=$(ms); }
done_step() { printf '[integration] %-26s %6ss  %s\n' "$STEP_NAME" "$(secs "$STEP_T")" "${1:-}"; }
engine_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

debian_mirror() {
  if [ -n "$MIRROR" ]; then echo "$MIRROR"; return; fi
  local m
  m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1)
  [ -n "$m" ] || m=$(grep -hs '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -n1)
  echo "${m:-http://deb.debian.org/debian}"
}

up() {
  mkdir -p "$WORK" "$RUNDIR" "$DOCKER_CONFIG/cli-plugins" "$CACHE"

  step "debian packages"
  if command -v dockerd >/dev/null && command -v debootstrap >/dev/null; then
    done_step "present"
  else
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq docker.io debootstrap >"$WORK/apt.log" 2>&1 || { tail -20 "$WORK/apt.log"; exit 1; }
    done_step "installed docker.io debootstrap"
  fi

  step "dockerd"
  if engine_up; then
    done_step "already running (pid $(cat "$PIDFILE" 2>/dev/null || echo '?'))"
  else
    mkdir -p "$WORK/docker-data" "$RUNDIR/exec"
    # own session so it outlives this script; stopped by its PID in `down`
    setsid dockerd --bridge=none --iptables=false --ip6tables=false \
      --data-root "$WORK/docker-data" --exec-root "$RUNDIR/exec" -p "$PIDFILE" \
      -H "unix://$SOCK" >"$WORK/dockerd.log" 2>&1 < /dev/null &
    for _ in $(seq 1 60); do engine_up && break; sleep 0.5; done
    engine_up || { echo "dockerd did not come up:"; tail -20 "$WORK/dockerd.log"; exit 1; }
    done_step "started (pid $(cat "$PIDFILE"))"
  fi

  step "compose v2 plugin"
  if docker compose version >/dev/null 2>&1; then
    done_step "$(docker compose version --short)"
  else
    # Debian trixie's docker-compose (v2) through a scratch apt config: system sources untouched
    local A="$WORK/apt-trixie"
    mkdir -p "$A/etc/sources.list.d" "$A/etc/preferences.d" "$A/state/lists/partial" "$A/cache/archives/partial" "$A/deb"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) trixie main" >"$A/etc/sources.list"
    local OPTS=(-o "Dir::Etc::sourcelist=$A/etc/sources.list" -o "Dir::Etc::sourceparts=$A/etc/sources.list.d"
      -o "Dir::Etc::preferencesparts=$A/etc/preferences.d" -o "Dir::State=$A/state" -o "Dir::Cache=$A/cache"
      -o "APT::Sandbox::User=root")
    local how="from trixie, cached"
    if ! ls "$CACHE"/docker-compose_*.deb >/dev/null 2>&1; then
      apt-get "${OPTS[@]}" update -qq >/dev/null
      (cd "$A/deb" && rm -f docker-compose_*.deb && apt-get "${OPTS[@]}" download docker-compose >/dev/null)
      cp "$A"/deb/docker-compose_*.deb "$CACHE/"
      how="from trixie"
    fi
    rm -rf "$A/x" && dpkg-deb -x "$(ls "$CACHE"/docker-compose_*.deb | tail -n1)" "$A/x"
    install -m 0755 "$A/x/usr/libexec/docker/cli-plugins/docker-compose" "$DOCKER_CONFIG/cli-plugins/docker-compose"
    rm -rf "$A/x"
    done_step "$(docker compose version --short) ($how)"
  fi

  step "base image $BASE_IMAGE"
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    done_step "present"
  else
    local tarball="$CACHE/bookworm-minbase-rootfs.tar" how="imported from $CACHE"
    if [ ! -s "$tarball" ]; then
      rm -rf "$WORK/rootfs"
      debootstrap --variant=minbase bookworm "$WORK/rootfs" "$(debian_mirror)" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -20 "$WORK/debootstrap.log"; exit 1; }
      tar -C "$WORK/rootfs" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
      rm -rf "$WORK/rootfs"
      how="built with debootstrap (minbase bookworm)"
    fi
    docker import -c 'CMD ["/bin/bash"]' "$tarball" "$BASE_IMAGE" >/dev/null
    done_step "$how"
  fi

  step "harbor $HARBOR_VERSION venv"
  local HV="$WORK/harbor-venv"
  if [ "$("$HV/bin/harbor" --version 2>/dev/null | tail -n1)" = "$HARBOR_VERSION" ]; then
    done_step "present"
  else
    [ -x "$PY312" ] || { echo "need Python 3.12 at $PY312 (set EVALKIT_PY312)"; exit 1; }
    rm -rf "$HV"
    if command -v uv >/dev/null; then
      UV_PYTHON_DOWNLOADS=never uv venv -q --python "$PY312" "$HV"
      UV_PYTHON_DOWNLOADS=never uv pip install -q --python "$HV/bin/python" "harbor==$HARBOR_VERSION"
    else
      "$PY312" -m venv "$HV"
      "$HV/bin/pip" install -q --disable-pip-version-check "harbor==$HARBOR_VERSION"
    fi
    done_step "installed"
  fi
  # the bundled scripted agent, importable by Harbor's Python (path of this checkout)
  "$HV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))' \
    | { read -r site; echo "$ROOT/agents" >"$site/evalkit-agents.pth"; }

  cat >"$ENVFILE" <<EOF
# written by .ci/integration.sh up; source with: set -a; . $ENVFILE; set +a
DOCKER_HOST=$DOCKER_HOST
DOCKER_CONFIG=$DOCKER_CONFIG
EVALKIT_HARBOR=$HV/bin/harbor
EVALKIT_INTEGRATION_WORK=$WORK
LITELLM_LOCAL_MODEL_COST_MAP=True
EOF
  echo "[integration] ready in $(secs "$T0")s; env file: $ENVFILE"
}

down() {
  step "stop dockerd"
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    local pid
    pid=$(cat "$PIDFILE")
    # containers on this private engine are all ours
    ids=$(docker ps -aq 2>/dev/null || true)
    [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
    kill -TERM "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    done_step "stopped pid $pid"
  else
    done_step "not running"
  fi
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  env) echo "$ENVFILE" ;;
  *) echo "usage: $0 [up|down|env]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Regenerates the README's GUI pictures (docs/images/): the timeline of the GPT-3 1,024-GPU scenario
# and the topology of the BERT-large fat tree. Usage: scripts/gui-screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
gui="$build/gui/clustersim-gui"
[ -x "$gui" ] || { echo "no $gui: build the clustersim-gui target first" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p docs/images
"$gui" --screenshot "$tmp/gpt3" scenarios/gpt3-175b-1024xA100.yaml
"$gui" --screenshot "$tmp/bert" scenarios/bert-large-ddp-4xdgx-a100.yaml
cp "$tmp/gpt3/timeline.png" docs/images/gui-timeline-gpt3-175b-1024xA100.png
cp "$tmp/bert/topology.png" docs/images/gui-topology-bert-large-4xdgx-a100.png
echo "wrote docs/images/gui-timeline-gpt3-175b-1024xA100.png, docs/images/gui-topology-bert-large-4xdgx-a100.png"

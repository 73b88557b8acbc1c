#!/bin/sh
# Fails when a layer under src/ includes a header of a layer above it
# (docs/design.md, "Layers and folders"). Each layer may include only itself and
# the layers listed for it here.
src=${1:?usage: check_layers.sh SRC_DIR}
allowed() {
    case $1 in
    util) echo "util" ;;
    boot) echo "util boot" ;;
    heap) echo "util heap" ;;
    transport) echo "util boot heap transport" ;;
    core) echo "util boot heap transport core" ;;
    observe) echo "util boot heap transport core observe" ;;
    sync) echo "util boot heap transport core observe sync" ;;
    coll) echo "util boot heap transport core observe sync coll" ;;
    api) echo "util boot heap transport core observe sync coll api" ;;
    *) echo "" ;;
    esac
}
status=0
for dir in "$src"/*/; do
    layer=$(basename "$dir")
    ok=$(allowed "$layer")
    [ -n "$ok" ] || { echo "unknown layer folder: $layer"; status=1; continue; }
    for inc in $(grep -rhoE '^#include "[a-z_]+/' "$dir" | sed -E 's/#include "([a-z_]+)\//\1/' | sort -u); do
        case " $ok " in
        *" $inc "*) ;;
        *) echo "layering: src/$layer includes src/$inc/ (allowed: $ok)"; grep -rn "#include \"$inc/" "$dir"; status=1 ;;
        esac
    done
done
[ $status = 0 ] && echo "layering ok"
exit $status

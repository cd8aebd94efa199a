#!/usr/bin/env bash
# Build the one-folder bundle in a clean venv WITHOUT TensorFlow (it would be bundled otherwise),
# then pack dist/tflite-inspector-<version>-linux-<arch>.tar.gz and smoke-test it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=build/pkg-venv
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e . 'pyinstaller>=6.10'
if "$VENV/bin/python" -c "import tensorflow" 2>/dev/null; then
  echo "error: TensorFlow is installed in $VENV; the bundle must not contain it" >&2
  exit 1
fi
VERSION=$("$VENV/bin/python" -c "import inspector; print(inspector.__version__)")
ARCH=$(uname -m)
rm -rf build/pyinstaller dist/tflite-inspector
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --workpath build/pyinstaller --distpath dist packaging/tflite_inspector.spec
cp packaging/linux/tflite-inspector.desktop inspector/resources/icons/tflite-inspector.png dist/tflite-inspector/
cp packaging/linux/INSTALL.txt dist/tflite-inspector/
TARBALL="dist/tflite-inspector-${VERSION}-linux-${ARCH}.tar.gz"
tar -C dist -czf "$TARBALL" tflite-inspector
echo "bundle: dist/tflite-inspector ($(du -sh dist/tflite-inspector | cut -f1) unpacked)"
echo "tarball: $TARBALL ($(du -sh "$TARBALL" | cut -f1))"
QT_QPA_PLATFORM=offscreen dist/tflite-inspector/tflite-inspector --version
QT_QPA_PLATFORM=offscreen dist/tflite-inspector/tflite-inspector --self-test

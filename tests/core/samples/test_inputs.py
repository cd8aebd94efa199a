"""Sample sources (random, .npy/.npz, image folders) and feeding both models the same data."""

from __future__ import annotations

import flatbuffers
import numpy as np
import pytest

from inspector.core.errors import InputError
from inspector.core.samples.images import parse_normalization
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import feed
from inspector.core.tflite.metadata import parse_normalization as parse_metadata
from inspector.core.tflite.model import load_model
from tests.helpers.fixture_models import representative_images


@pytest.fixture(scope="module")
def models(fixture_path):
    return load_model(fixture_path("float")), load_model(fixture_path("int8_io")), load_model(fixture_path("int8"))


def test_random_samples_are_seeded_and_within_the_quantized_range(models):
    fm, qm, _ = models
    a = list(open_source(fm, qm, SampleSettings(count=3, seed=7)))
    b = list(open_source(fm, qm, SampleSettings(count=3, seed=7)))
    c = list(open_source(fm, qm, SampleSettings(count=3, seed=8)))
    assert len(a) == 3 and a[0].inputs[0].shape == (1, 32, 32, 3) and a[0].inputs[0].dtype == np.float32
    np.testing.assert_array_equal(a[2].inputs[0], b[2].inputs[0])
    assert not np.array_equal(a[0].inputs[0], c[0].inputs[0])
    # sample i does not depend on how many samples were asked for
    np.testing.assert_array_equal(list(open_source(fm, qm, SampleSettings(count=1, seed=7)))[0].inputs[0], a[0].inputs[0])
    t = qm.main.tensors[qm.main.inputs[0]]
    s, z = t.quantization.scales[0], t.quantization.zero_points[0]
    lo, hi = s * (-128 - z), s * (127 - z)
    x = np.concatenate([smp.inputs[0] for smp in a])
    assert x.min() >= lo and x.max() <= hi
    assert x.max() - x.min() > 0.9 * (hi - lo)  # uses the range, not a sliver of it


def test_feed_quantizes_with_each_inputs_own_parameters(models):
    fm, qm, q_float_io = models
    smp = next(iter(open_source(fm, qm, SampleSettings(count=1, seed=1))))
    t = qm.main.tensors[qm.main.inputs[0]]
    fed = feed(qm, smp)[t.index]
    s, z = t.quantization.scales[0], t.quantization.zero_points[0]
    want = np.clip(np.round(smp.inputs[0].astype(np.float64) / s) + z, -128, 127).astype(np.int8)
    assert fed.dtype == np.int8
    np.testing.assert_array_equal(fed, want)
    ff = feed(fm, smp)[fm.main.inputs[0]]
    assert ff.dtype == np.float32
    np.testing.assert_array_equal(ff, smp.inputs[0])
    assert feed(q_float_io, smp)[q_float_io.main.inputs[0]].dtype == np.float32


def test_npz_by_input_name_with_labels(models, tmp_path):
    fm, qm, _ = models
    imgs = representative_images(5, seed=2)
    p = tmp_path / "data.npz"
    np.savez(p, image=imgs, labels=np.array([3, 1, 4, 1, 5]))
    src = open_source(fm, qm, SampleSettings(count=None, source=str(p)))
    got = list(src)
    assert len(src) == 5 and [s.label for s in got] == [3, 1, 4, 1, 5]
    np.testing.assert_array_equal(got[4].inputs[0], imgs[4:5])
    assert "data.npz[4]" in got[4].source
    assert len(list(open_source(fm, qm, SampleSettings(count=2, source=str(p))))) == 2


def test_npz_single_unnamed_array_and_npy(models, tmp_path):
    fm, qm, _ = models
    imgs = representative_images(3, seed=4)
    np.savez(tmp_path / "one.npz", whatever=imgs)
    np.save(tmp_path / "one.npy", imgs.astype(np.float64))
    for name in ("one.npz", "one.npy"):
        got = list(open_source(fm, qm, SampleSettings(count=None, source=str(tmp_path / name))))
        assert len(got) == 3 and got[1].inputs[0].dtype == np.float32
        np.testing.assert_allclose(got[1].inputs[0], imgs[1:2])
    np.save(tmp_path / "single.npy", imgs[0])  # one sample without its batch dim
    assert len(list(open_source(fm, qm, SampleSettings(count=None, source=str(tmp_path / "single.npy"))))) == 1


@pytest.mark.parametrize(
    "arrays, words",
    [
        ({"image": np.zeros((2, 28, 28, 3), np.float32)}, ["'image'", "[2, 28, 28, 3]", "bad.npz"]),
        ({"other": np.zeros((2, 32, 32, 3), np.float32), "more": np.zeros(2)}, ["'image'", "'other'"]),
        ({"image": np.zeros((2, 32, 32, 3), np.uint8)}, ["'image'", "uint8"]),
        ({"image": np.zeros((2, 32, 32, 3), np.float32), "labels": np.array([1.5, 2])}, ["labels"]),
    ],
)
def test_bad_npz_names_the_input_and_file(models, tmp_path, arrays, words):
    fm, qm, _ = models
    p = tmp_path / "bad.npz"
    np.savez(p, **arrays)
    with pytest.raises(InputError) as err:
        list(open_source(fm, qm, SampleSettings(count=None, source=str(p))))
    for w in words:
        assert w in str(err.value), (w, str(err.value))


def test_pickled_npy_is_refused(models, tmp_path):
    fm, qm, _ = models
    p = tmp_path / "obj.npy"
    np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="pickled"):
        open_source(fm, qm, SampleSettings(count=None, source=str(p)))


def test_image_folder_with_class_subfolders(models, tmp_path):
    from PIL import Image

    fm, qm, _ = models
    rng = np.random.default_rng(0)
    pixels = {}
    for cls in ("cat", "dog"):
        (tmp_path / cls).mkdir()
        for i in range(2):
            a = rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)
            Image.fromarray(a).save(tmp_path / cls / f"{i}.png")
            pixels[f"{cls}/{i}.png"] = a
    src = open_source(fm, qm, SampleSettings(count=None, source=str(tmp_path)))
    got = list(src)
    assert src.class_names == ("cat", "dog")
    assert [s.label for s in got] == [0, 0, 1, 1]
    x = got[2].inputs[0]
    assert x.shape == (1, 32, 32, 3) and x.dtype == np.float32
    want = np.asarray(Image.fromarray(pixels["dog/0.png"]).resize((32, 32), Image.BILINEAR), np.float32)
    np.testing.assert_allclose(x[0], want / 127.5 - 1, atol=1e-6)  # default [-1, 1]
    x01 = list(open_source(fm, qm, SampleSettings(count=None, source=str(tmp_path), normalization="0,1")))[2].inputs[0]
    np.testing.assert_allclose(x01[0], want / 255, atol=1e-6)
    assert len(list(open_source(fm, qm, SampleSettings(count=3, source=str(tmp_path), seed=1)))) == 3


def test_normalization_option_parsing():
    m, s = parse_normalization("mean=123.7/116.3/103.5,std=58.4/57.1/57.4")
    np.testing.assert_allclose(m, [123.7, 116.3, 103.5], rtol=1e-6)
    np.testing.assert_allclose(s, [58.4, 57.1, 57.4], rtol=1e-6)
    with pytest.raises(InputError):
        parse_normalization("bogus")


def _metadata_with_normalization(mean, std) -> bytes:
    """A minimal TFLite Support metadata flatbuffer (ModelMetadata schema, identifier M001)."""
    b = flatbuffers.Builder(256)

    def floats(vals):
        b.StartVector(4, len(vals), 4)
        for v in reversed(vals):
            b.PrependFloat32(v)
        return b.EndVector()

    def table_vector(offsets):
        b.StartVector(4, len(offsets), 4)
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    mv, sv = floats(mean), floats(std)
    b.StartObject(2)  # NormalizationOptions
    b.PrependUOffsetTRelativeSlot(0, mv, 0)
    b.PrependUOffsetTRelativeSlot(1, sv, 0)
    norm = b.EndObject()
    b.StartObject(2)  # ProcessUnit {options_type, options}
    b.PrependUint8Slot(0, 1, 0)
    b.PrependUOffsetTRelativeSlot(1, norm, 0)
    unit = b.EndObject()
    units = table_vector([unit])
    b.StartObject(5)  # TensorMetadata: process_units is field 4
    b.PrependUOffsetTRelativeSlot(4, units, 0)
    tensor = b.EndObject()
    inputs = table_vector([tensor])
    b.StartObject(3)  # SubGraphMetadata: input_tensor_metadata is field 2
    b.PrependUOffsetTRelativeSlot(2, inputs, 0)
    sg = b.EndObject()
    sgs = table_vector([sg])
    b.StartObject(4)  # ModelMetadata: subgraph_metadata is field 3
    b.PrependUOffsetTRelativeSlot(3, sgs, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=b"M001")
    return bytes(b.Output())


def test_metadata_normalization_is_read():
    m, s = parse_metadata(_metadata_with_normalization([127.5], [127.5]))
    assert m.tolist() == [127.5] and s.tolist() == [127.5]
    m, s = parse_metadata(_metadata_with_normalization([0.0, 1.0, 2.0], [255.0, 255.0, 128.0]))
    assert m.tolist() == [0.0, 1.0, 2.0] and s.tolist() == [255.0, 255.0, 128.0]
    assert parse_metadata(b"\x00" * 16) is None


def test_image_folder_uses_model_metadata_normalization(fixture_path, tmp_path):
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils as fu
    from PIL import Image

    m = fu.read_model_from_bytearray(bytearray(fixture_path("float").read_bytes()))
    buf = schema.BufferT()
    buf.data = np.frombuffer(_metadata_with_normalization([100.0], [50.0]), np.uint8)
    m.buffers.append(buf)
    md = schema.MetadataT()
    md.name, md.buffer = b"TFLITE_METADATA", len(m.buffers) - 1
    m.metadata = [*(m.metadata or []), md]
    path = tmp_path / "with_meta.tflite"
    path.write_bytes(bytes(fu.convert_object_to_bytearray(m)))
    folder = tmp_path / "imgs"
    folder.mkdir()
    Image.fromarray(np.full((32, 32, 3), 200, np.uint8)).save(folder / "a.png")
    fm = load_model(path)
    src = open_source(fm, None, SampleSettings(count=None, source=str(folder)))
    assert "metadata" in src.description
    np.testing.assert_allclose(next(iter(src)).inputs[0], 2.0)  # (200 - 100) / 50


def test_npz_with_one_array_per_sample(models, tmp_path):
    """Issue 19 §3: sample_0, sample_1, … (a common layout) for a single-input model: stacked in
    the order of their numbers (sample_10 after sample_9), with or without the batch dim, labels kept."""
    fm, qm, _ = models
    imgs = representative_images(11, seed=6)
    p = tmp_path / "per_sample.npz"
    arrays = {f"sample_{i}": (imgs[i] if i % 2 else imgs[i : i + 1]) for i in range(11)}
    np.savez(p, **dict(reversed(list(arrays.items()))), labels=np.arange(11) % 10)
    got = list(open_source(fm, qm, SampleSettings(count=None, source=str(p))))
    assert len(got) == 11 and [s.label for s in got] == list(np.arange(11) % 10)
    for i in (0, 1, 9, 10):
        np.testing.assert_array_equal(got[i].inputs[0], imgs[i : i + 1])
    bad = tmp_path / "mixed.npz"
    np.savez(bad, sample_0=imgs[0], sample_1=imgs[1, :16])  # one of the wrong shape: the plain error
    with pytest.raises(InputError) as err:
        list(open_source(fm, qm, SampleSettings(count=None, source=str(bad))))
    assert "sample_0" in str(err.value) and "one array per sample" in str(err.value)

"""Draw the app icon (run once; the PNG is committed): a histogram over a quantization grid."""

from pathlib import Path

from PIL import Image, ImageDraw


def main(size: int = 256) -> None:
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((8, 8, size - 8, size - 8), radius=40, fill=(33, 45, 66, 255))
    step = size // 12
    for x in range(step * 2, size - step, step):
        d.line((x, 40, x, size - 40), fill=(70, 90, 120, 255), width=2)
    heights = [20, 45, 90, 150, 175, 150, 90, 45, 20]
    bw = (size - 80) // len(heights)
    for i, h in enumerate(heights):
        x0 = 40 + i * bw
        d.rectangle((x0, size - 40 - h, x0 + bw - 4, size - 40), fill=(255, 152, 0, 255))
    pts = [(40 + i * bw + bw // 2, size - 40 - h + 12) for i, h in enumerate(heights)]
    d.line(pts, fill=(79, 195, 247, 255), width=6)
    out = Path(__file__).with_name("tflite-inspector.png")
    img.save(out)
    img.resize((64, 64)).save(out.with_name("tflite-inspector-64.png"))
    img.save(out.with_suffix(".ico"), sizes=[(16, 16), (32, 32), (48, 48), (256, 256)])


if __name__ == "__main__":
    main()

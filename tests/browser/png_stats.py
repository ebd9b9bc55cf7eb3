"""Prints 'WIDTHxHEIGHT COLOURS NONWHITE_PERCENT' of a PNG (Debian's python3-pil).

A blank or failed render has one or two colours and ~0% non-white pixels.
"""
import sys

from PIL import Image

img = Image.open(sys.argv[1]).convert("RGB")
w, h = img.size
colours = img.getcolors(maxcolors=1 << 24) or []
background = {(255, 255, 255), (244, 245, 247)}  # white and the page's grey
non_white = sum(n for n, c in colours if c not in background)
print(f"{w}x{h} {len(colours)} {100.0 * non_white / (w * h):.2f}")

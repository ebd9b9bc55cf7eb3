"""Checks an HTML report is self-contained and (with --dom) fully rendered.

  check_html.py FILE [DRAWN]

FILE is the report as gpuq wrote it or chromium's --dump-dom of it; DRAWN
is how many charts must be drawn (a <figure> with an <svg>).

Self-contained: no element that loads anything (script, link, img, iframe,
object, embed, source, video, audio), no attribute whose value is a URL
("://" or a protocol-relative "//"), no url() or @import in CSS. URLs in text
(a container named "http://x") are fine: they are not fetched. Prints one
line per problem and exits 1 if there is any.
"""
import re
import sys
from html.parser import HTMLParser

LOADING = {"script", "link", "img", "iframe", "object", "embed", "source",
           "video", "audio", "track", "image", "use", "feimage", "frame"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__()
        self.problems = []
        self.style = False
        self.figures = {}  # id -> has an <svg> or an empty-message
        self.current = None

    def handle_starttag(self, tag, attrs):
        if tag in LOADING:
            self.problems.append(f"<{tag}> element")
        for name, value in attrs:
            v = (value or "").strip().lower()
            if "://" in v or v.startswith("//") or v.startswith("data:") or \
                    "url(" in v:
                self.problems.append(f"<{tag} {name}={value!r}>")
        if tag == "style":
            self.style = True
        a = dict(attrs)
        if tag == "figure":
            self.current = a.get("id")
            self.figures[self.current] = ("chart-empty" in a.get("class", ""), False)
        if tag == "svg" and self.current:
            self.figures[self.current] = (self.figures[self.current][0], True)

    def handle_endtag(self, tag):
        if tag == "style":
            self.style = False
        if tag == "figure":
            self.current = None

    def handle_data(self, data):
        if self.style and re.search(r"url\(|@import|://", data):
            self.problems.append("CSS loads something: " + data.strip()[:80])


def main():
    path = sys.argv[1]
    want = int(sys.argv[2]) if len(sys.argv) > 2 else None
    c = Checker()
    with open(path, encoding="utf-8") as f:
        c.feed(f.read())
    drawn = sorted(k for k, (empty, svg) in c.figures.items() if svg)
    empty = sorted(k for k, (e, svg) in c.figures.items() if e)
    for p in c.problems:
        print("problem:", p)
    print(f"figures {len(c.figures)}, drawn {len(drawn)}: {' '.join(drawn)}; "
          f"empty {len(empty)}: {' '.join(empty)}")
    if want is not None and len(drawn) != want:
        print(f"problem: {len(drawn)} charts drawn, want {want}")
        c.problems.append("figures")
    for k, (e, svg) in c.figures.items():
        if not e and not svg:
            print(f"problem: figure {k} has neither an <svg> nor a message")
            c.problems.append(k)
    sys.exit(1 if c.problems else 0)


if __name__ == "__main__":
    main()

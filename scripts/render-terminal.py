#!/usr/bin/env python3
"""Renders captured terminal text (e.g. `tmux capture-pane -p`) to a PNG for the docs.
Usage: render-terminal.py SCREEN.txt OUT.png  (needs Pillow)."""
import sys
from PIL import Image, ImageDraw, ImageFont
lines = open(sys.argv[1], encoding='utf-8').read().rstrip('\n').split('\n')
font = ImageFont.truetype('/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf', 14)
cw = font.getlength('M'); lh = 19
W = int(max(len(l) for l in lines) * cw + 40); H = len(lines) * lh + 40
img = Image.new('RGB', (W, H), '#1e1e2e'); d = ImageDraw.Draw(img)
marks = {'✓': '#a6e3a1', '✗': '#f38ba8', '•': '#f9e2af'}
for i, l in enumerate(lines):
    y = 20 + i * lh
    base = '#89b4fa' if l.startswith('$') else ('#a6adc8' if l.startswith('              ') else '#cdd6f4')
    color = [base] * len(l)
    for mark, c in marks.items():
        j = l.find(mark)
        if j >= 0:
            end = l.find('  ', j)
            end = end if end > 0 else len(l)
            for k in range(j, end): color[k] = c
    for k, ch in enumerate(l):
        d.text((20 + k * cw, y), ch, font=font, fill=color[k])
img.save(sys.argv[2])

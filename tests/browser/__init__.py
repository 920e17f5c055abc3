"""The dashboard in a real browser (Debian's Chromium, driven by Playwright): ``make
test-browser``."""

"""The built-in dashboard pages, one module each; each registers itself with
:func:`bot.dashboard.page.page` when imported."""

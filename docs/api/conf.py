"""Sphinx configuration of the API reference (built by .ci/run with warnings as errors):

sphinx-build -W --keep-going -b html docs/api build/api
"""

project = "qwirkle-core"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
html_theme = "alabaster"
exclude_patterns = ["_build"]
nitpicky = False

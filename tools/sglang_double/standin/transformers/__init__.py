# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for the Transformers that real SGLang installs beside itself (the double has no other dependency):
only what the collection asks of the server's Python - AutoConfig's model types. tools/sglang_double/install.py puts it
into a venv that has no transformers."""
__version__ = "5.12.1"

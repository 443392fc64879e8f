# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang's model registry, as the double serves it: one module per model file of the real package, each with the
``EntryClass`` SGLang registers (read by the collection's model check without importing; names as in 0.5.9-0.5.23)."""

"""ConTextual: context-sensitive text-rich visual reasoning, GPT-4 judged acceptance rate (ICML 2024)."""

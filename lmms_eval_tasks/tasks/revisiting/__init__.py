"""What the "Revisiting MLLM Evaluation" tasks share (TDIUC, TallyQA, DVQA; VQDv1 keeps its own prompts):
the paper's prompts per model family, the image hook, loading the prepared dataset, and the `revisiting`
groups (``revisiting.yaml``, ``revisiting_sample.yaml``). No benchmark of its own: each dataset is a
benchmark package (``tasks/tdiuc``, ``tasks/tallyqa``, ``tasks/dvqa``, ``tasks/vqdv1``)."""

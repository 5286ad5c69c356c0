"""Everything around the dataset that a lab reruns: scoring prediction files, baselines,
the human ordering protocol, reports and model runners."""

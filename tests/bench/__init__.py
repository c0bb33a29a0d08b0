"""Benchmarks: `make bench` runs tests.bench.run (decoder throughput against kafka-python and aiokafka)."""

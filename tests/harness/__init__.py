"""Real-broker harness: Kafka JARs from Maven Central, KRaft brokers, DumpLogSegments, sample corpus."""

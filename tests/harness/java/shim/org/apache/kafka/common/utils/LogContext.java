/*
 * Kafka 4.4.0 moved LogContext to org.apache.kafka.common.utils.internals; the LocalTieredStorage of the 4.3.1 test
 * JAR (4.4.0 published none) still names it here. This subclass under the old name bridges the two, so a 4.4.0
 * broker can load Kafka's own LocalTieredStorage (tests/harness/tiered_corpus.py compiles it for 4.4.0 only).
 */

package org.apache.kafka.common.utils;

public class LogContext extends org.apache.kafka.common.utils.internals.LogContext {
    public LogContext(String logPrefix) {
        super(logPrefix);
    }

    public LogContext() {
        super();
    }
}

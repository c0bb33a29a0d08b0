/*
 * Writes legacy message-format (magic 0 and magic 1) partitions with Kafka's own code, since a 3.9 broker
 * only ever writes magic 2.
 *
 *   java -cp '<kafka libs>/*' LegacyRecords.java <log dir>
 *
 * Creates <log dir>/legacy-v0-0 and <log dir>/legacy-v1-0. Batches are built with MemoryRecords.builder
 * (MemoryRecordsBuilder: legacy entries, compressed wrappers, lz4 with the magic-0 broken header checksum)
 * and appended through LogSegment.append, the broker's append path: FileRecords writes the .log, and the
 * .index/.timeindex entries follow index.interval.bytes exactly as on a broker. Each segment is closed the
 * way a broker rolls one (onBecomeInactiveSegment: final time-index entry, indexes trimmed).
 * Prints one line per batch: "<dir> <segment base> <first offset> <last offset> <description>".
 */

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;

public class LegacyRecords {
    static final long T0 = 1262304000000L; // 2010-01-01T00:00:00Z: fixed, so the v1 files are reproducible
    static final LogConfig CONFIG = new LogConfig(Map.of("index.interval.bytes", "128"));

    static byte[] utf8(String s) { return s == null ? null : s.getBytes(StandardCharsets.UTF_8); }

    static final class Writer {
        final File dir;
        final byte magic;
        LogSegment segment;
        long next = 0;

        Writer(File dir, byte magic) { this.dir = dir; this.magic = magic; dir.mkdirs(); }

        void roll() throws Exception {
            if (segment != null) { segment.onBecomeInactiveSegment(); segment.close(); }
            segment = LogSegment.open(dir, next, CONFIG, Time.SYSTEM, false, 0, false, "");
        }

        /** One batch of n records: key null every third record, value null (tombstone) every fifth. */
        void batch(Compression compression, TimestampType type, long logAppendTime, int n, String what)
                throws Exception {
            ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
            MemoryRecordsBuilder b = MemoryRecords.builder(buf, magic, compression, type, next, logAppendTime);
            long first = next;
            for (int i = 0; i < n; i++, next++) {
                String key = next % 3 == 0 ? null : "key-" + (next % 4);
                String value = next % 5 == 4 ? null : "legacy v" + magic + " offset " + next + " " + what;
                long ts = magic == 0 ? RecordBatch.NO_TIMESTAMP : T0 + next * 1000;
                b.appendWithOffset(next, ts, utf8(key), utf8(value));
            }
            MemoryRecords records = b.build();
            segment.append(next - 1, records);
            System.out.println(dir.getName() + " " + segment.baseOffset() + " " + first + " " + (next - 1) + " " + what);
        }

        void close() throws Exception { segment.onBecomeInactiveSegment(); segment.close(); }
    }

    public static void main(String[] args) throws Exception {
        File root = new File(args[0]);
        long none = RecordBatch.NO_TIMESTAMP;

        Writer v0 = new Writer(new File(root, "legacy-v0-0"), RecordBatch.MAGIC_VALUE_V0);
        TimestampType t0 = TimestampType.NO_TIMESTAMP_TYPE;
        v0.roll();
        v0.batch(Compression.NONE, t0, none, 4, "uncompressed");
        v0.batch(Compression.gzip().build(), t0, none, 5, "gzip wrapper");
        v0.batch(Compression.snappy().build(), t0, none, 5, "snappy wrapper");
        v0.batch(Compression.lz4().build(), t0, none, 5, "lz4 wrapper (broken header checksum)");
        v0.roll();
        v0.batch(Compression.NONE, t0, none, 3, "uncompressed");
        v0.batch(Compression.gzip().build(), t0, none, 4, "gzip wrapper");
        v0.close();

        Writer v1 = new Writer(new File(root, "legacy-v1-0"), RecordBatch.MAGIC_VALUE_V1);
        TimestampType ct = TimestampType.CREATE_TIME, lat = TimestampType.LOG_APPEND_TIME;
        v1.roll();
        v1.batch(Compression.NONE, ct, none, 4, "uncompressed CreateTime");
        v1.batch(Compression.gzip().build(), ct, none, 5, "gzip wrapper CreateTime");
        v1.batch(Compression.snappy().build(), ct, none, 5, "snappy wrapper CreateTime");
        v1.batch(Compression.lz4().build(), ct, none, 5, "lz4 wrapper CreateTime");
        v1.roll();
        v1.batch(Compression.gzip().build(), lat, T0 + 3_600_000, 4, "gzip wrapper LogAppendTime");
        v1.batch(Compression.NONE, lat, T0 + 7_200_000, 3, "uncompressed LogAppendTime");
        v1.batch(Compression.NONE, ct, none, 3, "uncompressed CreateTime");
        v1.close();
    }
}

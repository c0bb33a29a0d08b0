/*
 * Writes the decoder benchmark's segment files with Apache Kafka's own code (kafka-clients), as a producer
 * and a broker would: records are appended to the producer's ProducerBatch (a MemoryRecordsBuilder with
 * the producer's batch-size limit and compression-ratio estimate), then the broker's in-place offset
 * assignment (setLastOffset + setPartitionLeaderEpoch, as LogValidator does for v2 batches) makes the
 * offsets contiguous across the segment.
 *
 *   java -cp '<kafka libs>/*' GenSegment.java <out.log> <codec> <min bytes> <batch bytes> <seed> <topic>
 *
 * Records: key "user-<n>", a ~100-byte JSON value, one "trace-id" header. Writes <out.log>.tmp, renames it
 * to <out.log> when complete, and prints one line: "records=<n> batches=<n> bytes=<n>".
 */

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.kafka.clients.producer.internals.ProducerBatch;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.ProducerIdAndEpoch;

public class GenSegment {
    private static final String[] EVENTS = {"view", "click", "add_to_cart", "checkout", "search", "login"};
    private static final long START_MS = 1_700_000_000_000L;
    private static final long PRODUCER_ID = 4242L;

    /** One record's fields, regenerated only after the previous one was appended. */
    private static final class Rec {
        long timestamp;
        byte[] key;
        byte[] value;
        Header[] headers;
    }

    private static void next(SplittableRandom rnd, long index, Rec r) {
        int user = rnd.nextInt(100_000);
        r.timestamp = START_MS + index / 50;  // ~50 records per millisecond
        r.key = ("user-" + user).getBytes(StandardCharsets.UTF_8);
        String value = String.format(Locale.ROOT,
                "{\"user\":\"user-%d\",\"event\":\"%s\",\"page\":\"/p/%d\",\"ts\":%d,\"amt\":%d.%02d,\"sid\":\"%012x\"}",
                user, EVENTS[rnd.nextInt(EVENTS.length)], rnd.nextInt(10_000), r.timestamp,
                rnd.nextInt(500), rnd.nextInt(100), rnd.nextLong() & 0xFFFFFFFFFFFFL);
        r.value = value.getBytes(StandardCharsets.UTF_8);
        String trace = String.format(Locale.ROOT, "%016x", rnd.nextLong());
        r.headers = new Header[] {new RecordHeader("trace-id", trace.getBytes(StandardCharsets.UTF_8))};
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Compression compression = Compression.of(args[1]).build();
        long minBytes = Long.parseLong(args[2]);
        int batchBytes = Integer.parseInt(args[3]);
        SplittableRandom rnd = new SplittableRandom(Long.parseLong(args[4]));
        TopicPartition tp = new TopicPartition(args[5], 0);
        ProducerIdAndEpoch producer = new ProducerIdAndEpoch(PRODUCER_ID, (short) 0);

        Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
        long written = 0;
        long offset = 0;
        long batches = 0;
        Rec rec = new Rec();
        next(rnd, 0, rec);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (written < minBytes) {
                // RecordAccumulator: a buffer of batch.size, the builder of the producer's magic/compression.
                MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(batchBytes),
                        RecordBatch.CURRENT_MAGIC_VALUE, compression, TimestampType.CREATE_TIME, 0L);
                ProducerBatch batch = new ProducerBatch(tp, builder, System.currentTimeMillis());
                batch.setProducerState(producer, (int) offset, false);
                int appended = 0;
                while (batch.tryAppend(rec.timestamp, rec.key, rec.value, rec.headers, null,
                        System.currentTimeMillis()) != null) {
                    appended++;
                    next(rnd, offset + appended, rec);
                }
                batch.close();
                MemoryRecords records = batch.records();
                for (MutableRecordBatch b : records.batches()) {
                    // The broker (LogValidator, in-place assignment): offsets and the leader epoch.
                    b.setLastOffset(offset + b.lastOffset());
                    b.setPartitionLeaderEpoch(0);
                }
                offset += appended;
                batches++;
                ByteBuffer buf = records.buffer().duplicate();
                while (buf.hasRemaining()) {
                    written += ch.write(buf);
                }
            }
        }
        Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        System.out.println("records=" + offset + " batches=" + batches + " bytes=" + written);
    }
}

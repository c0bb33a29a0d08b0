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
 *
 *   java -cp '<kafka libs>/*' GenSegment.java fleet <log dir> <partitions> <bytes per partition>
 *        <segment bytes> <batch bytes> <seed> <topic> <codec>[,<codec>...]
 *
 * A broker log dir of <partitions> partitions <topic>-<n> (codecs in turn), each written through the broker's
 * own LogSegment (kafka-storage): segments rolled at <segment bytes>, with the .index and .timeindex entries
 * Kafka writes every 4096 bytes (log.index.interval.bytes) and trims when a segment rolls, the producer state
 * snapshot the broker's ProducerStateManager takes at every roll and at a clean shutdown (<offset>.snapshot), the
 * partition.metadata and leader-epoch-checkpoint files of a KRaft broker's partition (epoch 0 from offset 0).
 * Prints one line per partition: "<partition dir> records=<n> batches=<n> bytes=<n>".
 *
 *   java -cp '<kafka libs>/*' GenSegment.java checkpoints <log dir> <cluster id> <node id>
 *
 * The files a KRaft broker's clean shutdown leaves at the root of a log dir of such partitions, written with
 * Kafka's own writers: recovery-point-offset-checkpoint, replication-offset-checkpoint (the high watermarks) and
 * log-start-offset-checkpoint (server-common's CheckpointFile, version 0, "topic partition offset" entries, as
 * LogManager and ReplicaManager write them) and meta.properties (MetaProperties, version 1). A partition's log
 * end is its newest producer snapshot's offset (the clean shutdown's), its log start its first segment's base.
 */

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.apache.kafka.clients.producer.internals.ProducerBatch;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.ProducerIdAndEpoch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.properties.MetaProperties;
import org.apache.kafka.metadata.properties.MetaPropertiesVersion;
import org.apache.kafka.metadata.properties.PropertiesUtils;
import org.apache.kafka.server.common.CheckpointFile;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerAppendInfo;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

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

    /** One producer batch of records from offset {@code offset} on, as the broker stores it. */
    private static MemoryRecords nextBatch(SplittableRandom rnd, Rec rec, long offset, Compression compression,
                                           int batchBytes, TopicPartition tp, ProducerIdAndEpoch producer) {
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
        return records;
    }

    private static long lastOffset(MemoryRecords records) {
        long last = -1;
        for (MutableRecordBatch b : records.batches()) {
            last = b.lastOffset();
        }
        return last;
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("fleet")) {
            fleet(args);
            return;
        }
        if (args[0].equals("checkpoints")) {
            checkpoints(args);
            return;
        }
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
                MemoryRecords records = nextBatch(rnd, rec, offset, compression, batchBytes, tp, producer);
                offset = lastOffset(records) + 1;
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

    /** A KRaft broker's partition.metadata (a topic id) and leader-epoch-checkpoint (epoch 0 from offset 0). */
    private static void writePartitionFiles(File dir, Uuid topicId) throws java.io.IOException {
        Files.writeString(new File(dir, "partition.metadata").toPath(), "version: 0\ntopic_id: " + topicId + "\n");
        Files.writeString(new File(dir, "leader-epoch-checkpoint").toPath(), "0\n1\n0 0\n");
    }

    private static void fleet(String[] args) throws Exception {
        File logDir = new File(args[1]);
        int partitions = Integer.parseInt(args[2]);
        long partitionBytes = Long.parseLong(args[3]);
        int segmentBytes = Integer.parseInt(args[4]);
        int batchBytes = Integer.parseInt(args[5]);
        SplittableRandom rnd = new SplittableRandom(Long.parseLong(args[6]));
        String topic = args[7];
        String[] codecs = args[8].split(",");
        LogConfig config = new LogConfig(Map.of("segment.bytes", Integer.toString(segmentBytes)));
        Uuid topicId = new Uuid(topic.hashCode(), PRODUCER_ID);  // one id for the topic, the same every time
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            Compression compression = Compression.of(codecs[p % codecs.length]).build();
            ProducerIdAndEpoch producer = new ProducerIdAndEpoch(PRODUCER_ID + p, (short) 0);
            File dir = new File(logDir, topic + "-" + p);
            if (!dir.mkdirs()) {
                throw new IllegalStateException("cannot create " + dir);
            }
            Rec rec = new Rec();
            next(rnd, 0, rec);
            long offset = 0;
            long written = 0;
            long batches = 0;
            writePartitionFiles(dir, topicId);
            ProducerStateManager producers = new ProducerStateManager(tp, dir, 900_000,
                    new ProducerStateManagerConfig(86_400_000, false), Time.SYSTEM);
            LogSegment segment = LogSegment.open(dir, 0, config, Time.SYSTEM, 0, false);
            while (written < partitionBytes) {
                MemoryRecords records = nextBatch(rnd, rec, offset, compression, batchBytes, tp, producer);
                if (segment.size() + records.sizeInBytes() > segmentBytes) {  // UnifiedLog.maybeRoll, by size
                    segment.onBecomeInactiveSegment();
                    segment.close();
                    producers.updateMapEndOffset(offset);  // UnifiedLog.roll: a snapshot at the new base offset
                    producers.takeSnapshot();
                    segment = LogSegment.open(dir, offset, config, Time.SYSTEM, 0, false);
                }
                long last = lastOffset(records);
                segment.append(last, records);
                for (MutableRecordBatch b : records.batches()) {  // UnifiedLog.append: the producer state follows
                    ProducerAppendInfo info = producers.prepareUpdate(b.producerId(), AppendOrigin.CLIENT);
                    info.append(b, Optional.empty());
                    producers.update(info);
                }
                producers.updateMapEndOffset(last + 1);
                written += records.sizeInBytes();
                offset = last + 1;
                batches++;
            }
            segment.flush();
            segment.close();
            producers.takeSnapshot();  // UnifiedLog.close: a clean shutdown's snapshot at the log end
            System.out.println(dir + " records=" + offset + " batches=" + batches + " bytes=" + written);
        }
    }

    /** "topic partition offset", as kafka.server.checkpoints.OffsetCheckpointFile formats an entry. */
    private static final CheckpointFile.EntryFormatter<Map.Entry<TopicPartition, Long>> OFFSETS =
            new CheckpointFile.EntryFormatter<>() {
                @Override
                public String toString(Map.Entry<TopicPartition, Long> e) {
                    return e.getKey().topic() + " " + e.getKey().partition() + " " + e.getValue();
                }

                @Override
                public Optional<Map.Entry<TopicPartition, Long>> fromString(String line) {
                    String[] f = line.split(" ");
                    return Optional.of(Map.entry(new TopicPartition(f[0], Integer.parseInt(f[1])), Long.parseLong(f[2])));
                }
            };

    /** The largest (``largest``) or the smallest offset naming a file of ``dir`` that ends in ``suffix``. */
    private static long fileOffset(File dir, String suffix, boolean largest) {
        long found = largest ? -1 : Long.MAX_VALUE;
        for (String name : dir.list()) {
            if (name.endsWith(suffix)) {
                long offset = Long.parseLong(name.substring(0, name.length() - suffix.length()));
                found = largest ? Math.max(found, offset) : Math.min(found, offset);
            }
        }
        return found;
    }

    private static void checkpoints(String[] args) throws Exception {
        File logDir = new File(args[1]);
        List<Map.Entry<TopicPartition, Long>> ends = new ArrayList<>();
        List<Map.Entry<TopicPartition, Long>> starts = new ArrayList<>();
        for (File dir : logDir.listFiles(File::isDirectory)) {
            String name = dir.getName();
            int dash = name.lastIndexOf('-');
            TopicPartition tp = new TopicPartition(name.substring(0, dash), Integer.parseInt(name.substring(dash + 1)));
            ends.add(Map.entry(tp, fileOffset(dir, ".snapshot", true)));
            starts.add(Map.entry(tp, fileOffset(dir, ".log", false)));
        }
        for (String file : new String[]{"recovery-point-offset-checkpoint", "replication-offset-checkpoint"}) {
            new CheckpointFile<>(new File(logDir, file), 0, OFFSETS).write(ends);
        }
        new CheckpointFile<>(new File(logDir, "log-start-offset-checkpoint"), 0, OFFSETS).write(starts);
        MetaProperties meta = new MetaProperties.Builder().setVersion(MetaPropertiesVersion.V1).setClusterId(args[2])
                .setNodeId(Integer.parseInt(args[3])).setDirectoryId(Uuid.randomUuid()).build();
        PropertiesUtils.writePropertiesFile(meta.toProperties(), new File(logDir, "meta.properties").getPath(), true);
        System.out.println("partitions=" + ends.size());
    }
}

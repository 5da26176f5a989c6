package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the interleaving tests share: a migrated database with the write table of {@link
 * Interleaving}, and a thread pool for the side that blocks. Test classes run one at a time.
 */
// A hang guard on each test and on the migration in @BeforeAll, which at load 40 on 2 cores (CI)
// can take minutes; the waits inside a test are bounded by Interleaving.PATIENCE.
@Timeout(value = 10, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
abstract class InterleavingTestBase {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  static final Duration LEASE = Duration.ofMinutes(5);

  private static @Nullable ExecutorService pool;

  @BeforeAll
  static void migrateAndStartPool() throws SQLException {
    Fence.migrate(db);
    try (Connection c = db.connect()) {
      Interleaving.createWriteTable(c);
    }
    pool = Interleaving.newPool();
  }

  @AfterAll
  static void stopPool() throws InterruptedException {
    Interleaving.shutdown(pool);
    pool = null;
  }

  static ExecutorService pool() {
    ExecutorService p = pool;
    assertThat(p).isNotNull();
    return p;
  }
}

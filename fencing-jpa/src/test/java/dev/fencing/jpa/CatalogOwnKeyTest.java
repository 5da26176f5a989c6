package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.testing.TestDatabaseExtension;
import java.time.Duration;
import java.util.Map;
import org.hibernate.MappingException;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The key that makes a row's own part follow it (a {@code JOINED} subclass's table on its own key
 * columns to its superclass's table) is kept only when it refers to the owner's key: the same row.
 * A key on the same columns to another, unique, column of the owner's table refers to another row,
 * of another resource when the rows name their own ({@link Hutch}: {@code hutch:<id>}).
 */
class CatalogOwnKeyTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static HikariDataSource pool;

  @BeforeAll
  static void start() {
    JpaFixture.migrate(db);
    pool = JpaFixture.pool(db);
  }

  @AfterAll
  static void stop() {
    pool.close();
  }

  @BeforeEach
  void dropTables() {
    sql("DROP TABLE IF EXISTS cage, hutch, foal, herd, barn CASCADE");
  }

  private static Throwable refusal(Throwable thrown) {
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof MappingException) {
        return t;
      }
    }
    return null;
  }

  /**
   * Before, the key was recognised by its columns and its table alone: Hibernate started, and the
   * delete of hutch {@code a}, with {@code hutch:a}'s token only, deleted the part of hutch {@code
   * b}, whose token was never bound.
   */
  @Test
  void anOwnKeyToAnotherColumnOfTheOwnersTableIsRefused() throws Exception {
    sql(
        "CREATE TABLE hutch (id varchar(255) PRIMARY KEY, code varchar(255) UNIQUE)",
        "CREATE TABLE cage (bars bigint NOT NULL,"
            + " id varchar(255) PRIMARY KEY REFERENCES hutch (code) ON DELETE CASCADE)",
        "INSERT INTO hutch VALUES ('a', 'b'), ('b', NULL)",
        "INSERT INTO cage VALUES (3, 'b')");

    Throwable thrown;
    try (LeaseClient leases = LeaseClient.builder(pool).holder("own-key").build();
        Lease lease = leases.tryAcquire("hutch:a", Duration.ofMinutes(1)).orElseThrow()) {
      thrown =
          catchThrowable(
              () -> {
                try (SessionFactory started =
                        JpaFixture.sessionFactory(
                            FencedDataSource.wrap(pool),
                            Map.of("hibernate.hbm2ddl.auto", "none"),
                            Hutch.class,
                            Cage.class);
                    FencingScope scope = Fencing.bind(lease)) {
                  started.inTransaction(s -> s.remove(s.find(Hutch.class, "a")));
                }
              });
    }

    assertThat(query("SELECT count(*) FROM cage"))
        .as("hutch a's delete, with hutch:a's token, must not delete hutch b's part")
        .isEqualTo("1");
    assertThat(refusal(thrown))
        .as("Hibernate must refuse to start (" + thrown + ")")
        .isNotNull()
        .hasMessageContaining("@Fenced on entity dev.fencing.jpa.Cage")
        .hasMessageContaining(
            "the foreign key of table cage on [id] to table hutch is ON DELETE CASCADE (constraint"
                + " cage_id_fkey of public.cage, in the database)");
  }

  /** The key to the owner's primary key, declared by a migration, is the same row's: kept. */
  @Test
  void anOwnKeyToTheOwnersPrimaryKeyIsKept() {
    sql(
        "CREATE TABLE hutch (id varchar(255) PRIMARY KEY, code varchar(255) UNIQUE)",
        "CREATE TABLE cage (bars bigint NOT NULL,"
            + " id varchar(255) PRIMARY KEY REFERENCES hutch (id) ON DELETE CASCADE)");

    assertThat(
            catchThrowable(
                () ->
                    JpaFixture.sessionFactory(
                            FencedDataSource.wrap(pool),
                            Map.of("hibernate.hbm2ddl.auto", "none"),
                            Hutch.class,
                            Cage.class)
                        .close()))
        .isNull();
  }

  /**
   * A key from a partition, or an inheritance child, to its own fenced table, whose rows are its
   * rows: a delete that cascades needs the fenced table's tokens already (one fixed resource for
   * every row), so no write without them reaches the fenced rows. Kept, as a key between two tables
   * fenced with the same fixed resource is (checked, not changed, in this round).
   */
  @Test
  void aKeyFromAPartitionOrChildToItsFencedTableIsKept() {
    sql(
        "CREATE TABLE barn (id varchar(255) PRIMARY KEY)",
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255))"
            + " PARTITION BY LIST (id)",
        "CREATE TABLE foal_f PARTITION OF foal FOR VALUES IN ('f')",
        "ALTER TABLE foal_f ADD CONSTRAINT foal_f_up FOREIGN KEY (barn_id) REFERENCES foal"
            + " ON DELETE CASCADE");
    assertThat(startFoals()).as("a partition's key to its partitioned table").isNull();

    sql(
        "DROP TABLE foal CASCADE",
        "CREATE TABLE foal (id varchar(255) PRIMARY KEY, barn_id varchar(255))",
        "CREATE TABLE herd (CONSTRAINT herd_up FOREIGN KEY (barn_id) REFERENCES foal"
            + " ON DELETE CASCADE) INHERITS (foal)");
    assertThat(startFoals()).as("an inheritance child's key to its parent").isNull();
  }

  private static Throwable startFoals() {
    return catchThrowable(
        () ->
            JpaFixture.sessionFactory(
                    FencedDataSource.wrap(pool),
                    Map.of("hibernate.hbm2ddl.auto", "none"),
                    Barn.class,
                    Foal.class)
                .close());
  }

  private static void sql(String... statements) {
    JpaFixture.sql(pool, statements);
  }

  private static String query(String sql) {
    return JpaFixture.query(pool, sql);
  }
}

package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Whether a per-row table is protected is asked of every table of its name the connection can
 * write, not of the one the session's search_path finds: a bulk write to an unprotected table is
 * refused though a protected table of the same name shadows it on the path (another schema, a
 * temporary table a previous borrower of the pooled connection left behind), and no function or
 * operator put on the path answers for the catalog's.
 */
class ProtectedTableShadowTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static DataSource plain;

  @BeforeAll
  static void migrate() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    // protected in the default schema, an unprotected namesake with a row in another
    exec(plain, "CREATE TABLE rows_s (id int PRIMARY KEY)");
    exec(plain, "SELECT fencing.protect_rows('rows_s', 'id', 's/')");
    exec(plain, "CREATE SCHEMA other");
    exec(plain, "CREATE TABLE other.rows_s (id int PRIMARY KEY)");
    exec(plain, "INSERT INTO other.rows_s VALUES (1)");
    // unprotected, a row in it, no namesake
    exec(plain, "CREATE TABLE rows_t (id int PRIMARY KEY)");
    exec(plain, "INSERT INTO rows_t VALUES (1)");
    exec(plain, "CREATE TABLE rows_u (id int PRIMARY KEY)");
    exec(plain, "INSERT INTO rows_u VALUES (1)");
  }

  @Test
  void aBulkWriteToAnUnprotectedTableIsRefusedThoughTheSearchPathFindsAProtectedNamesake()
      throws SQLException {
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    FencedTables.of(fenced).orElseThrow().requireRowResources("rows_s");
    try (Connection c = fenced.getConnection()) {
      assertThatThrownBy(() -> exec(c, "DELETE FROM other.rows_s"))
          .isInstanceOf(MissingFencingTokenException.class);
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM other.rows_s")).isEqualTo(1);
  }

  /**
   * A pooled connection keeps its temporary tables: one borrower leaves {@code pg_temp.rows_t} with
   * a trigger named {@code fencing_protect} (any trigger function will do), and the next borrower's
   * bulk write to {@code public.rows_t}, unprotected, must still be refused.
   */
  @Test
  void aTemporaryTableLeftOnAPooledConnectionDoesNotMakeItsNamesakeProtected() throws Exception {
    try (FencingTestSupport.Pool pool =
        FencingTestSupport.Wiring.FENCED_OVER_HIKARI.open(plain, 1)) {
      FencedTables.of(pool.dataSource()).orElseThrow().requireRowResources("rows_t");
      try (Connection previous = pool.dataSource().getConnection()) {
        exec(previous, "CREATE TEMP TABLE rows_t (id int)");
        exec(
            previous,
            "CREATE TRIGGER fencing_protect BEFORE UPDATE ON pg_temp.rows_t FOR EACH ROW"
                + " EXECUTE FUNCTION pg_catalog.suppress_redundant_updates_trigger()");
      }
      try (Connection next = pool.dataSource().getConnection()) {
        assertThatThrownBy(() -> exec(next, "DELETE FROM public.rows_t"))
            .isInstanceOf(MissingFencingTokenException.class);
      }
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM public.rows_t")).isEqualTo(1);
  }

  /**
   * A borrower leaves {@code search_path} naming its own schema before pg_catalog, with a {@code
   * to_regclass} that names the protected table: the next borrower's bulk write to the unprotected
   * one is still refused.
   */
  @Test
  void aFunctionPutBeforePgCatalogOnThePathDoesNotAnswerWhetherATableIsProtected()
      throws Exception {
    exec(plain, "CREATE SCHEMA IF NOT EXISTS shadow");
    exec(
        plain,
        "CREATE OR REPLACE FUNCTION shadow.to_regclass(text) RETURNS pg_catalog.regclass"
            + " LANGUAGE sql AS $$SELECT 'public.rows_s'::pg_catalog.regclass$$");
    try (FencingTestSupport.Pool pool =
        FencingTestSupport.Wiring.HIKARI_OVER_FENCED.open(plain, 1)) {
      DataSource fenced = pool.dataSource();
      FencedTables.of(fenced).orElseThrow().requireRowResources("rows_u");
      try (Connection previous = fenced.getConnection()) {
        exec(previous, "SET search_path = shadow, pg_catalog, public");
      }
      try (Connection next = fenced.getConnection()) {
        assertThatThrownBy(() -> exec(next, "DELETE FROM rows_u"))
            .isInstanceOf(MissingFencingTokenException.class);
      }
    }
    assertThat(queryLong(plain, "SELECT count(*) FROM public.rows_u")).isEqualTo(1);
  }
}

package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static dev.fencing.jdbc.FencingTestSupport.rejections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGConnection;
import org.postgresql.fastpath.Fastpath;
import org.postgresql.fastpath.FastpathArg;
import org.postgresql.largeobject.LargeObjectManager;

/**
 * Writes the SQL text does not show, through a {@link FencedDataSource} connection with a token
 * bound: a zombie's stale token is refused, nothing is written and the refusal is recorded; the
 * current holder's token is accepted and the results are those of an unfenced connection. The check
 * that closes them rides with COMMIT ({@code check_tokens_if_written}).
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class BlindSpotTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static final long CURRENT = 5;
  private static final long STALE = 4;

  private static DataSource plain;
  private static FencedDataSource fenced;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    fenced = FencedDataSource.wrap(plain);
    for (String ddl :
        new String[] {
          "CREATE TABLE bs (id serial PRIMARY KEY, tag text NOT NULL)",
          "CREATE FUNCTION bs_write(p_tag text) RETURNS int LANGUAGE sql"
              + " AS 'INSERT INTO bs (tag) VALUES (p_tag) RETURNING 7'",
          "CREATE FUNCTION bs_fastpath() RETURNS int LANGUAGE sql"
              + " AS 'INSERT INTO bs (tag) VALUES (''fastpath'') RETURNING 7'",
          "CREATE VIEW bs_view AS SELECT bs_write('view') AS x",
          "CREATE FUNCTION bs_op(a int, b int) RETURNS int LANGUAGE sql"
              + " AS 'INSERT INTO bs (tag) VALUES (''operator'') RETURNING a + b'",
          "CREATE OPERATOR #+# (LEFTARG = int, RIGHTARG = int, FUNCTION = bs_op)",
          "CREATE FUNCTION public.md5(integer) RETURNS text LANGUAGE sql"
              + " AS 'INSERT INTO bs (tag) VALUES (''md5'') RETURNING ''overloaded'''",
          "CREATE TABLE bs_ruled (x int)",
          "CREATE RULE bs_rule AS ON INSERT TO bs_ruled DO INSTEAD"
              + " INSERT INTO bs (tag) VALUES ('rule')",
          "CREATE TABLE bs_triggered (x int)",
          "CREATE FUNCTION bs_trigger() RETURNS trigger LANGUAGE plpgsql"
              + " AS 'BEGIN INSERT INTO bs (tag) VALUES (''trigger''); RETURN NULL; END'",
          "CREATE TRIGGER bs_trigger AFTER INSERT ON bs_triggered"
              + " FOR EACH STATEMENT EXECUTE FUNCTION bs_trigger()",
          "CREATE PROCEDURE bs_proc(p_tag text) LANGUAGE sql"
              + " AS 'INSERT INTO bs (tag) VALUES (p_tag)'"
        }) {
      exec(plain, ddl);
    }
  }

  /** A write hidden one way or another; returns what the caller saw, to compare. */
  @FunctionalInterface
  interface Spot {
    @Nullable Object run(Connection c) throws Exception;
  }

  static Stream<Arguments> spots() {
    return Stream.of(
        Arguments.of("view", (Spot) c -> first(c, "SELECT * FROM bs_view")),
        Arguments.of("operator", (Spot) c -> first(c, "SELECT 1 #+# 2")),
        Arguments.of("md5", (Spot) c -> first(c, "SELECT md5(42)")),
        Arguments.of("from", (Spot) c -> first(c, "SELECT * FROM bs_write('from')")),
        Arguments.of("rule", (Spot) c -> update(c, "INSERT INTO bs_ruled VALUES (1)")),
        Arguments.of("trigger", (Spot) c -> update(c, "INSERT INTO bs_triggered VALUES (1)")),
        Arguments.of("call", (Spot) c -> update(c, "CALL bs_proc('call')")),
        Arguments.of(
            "escape",
            (Spot)
                c -> {
                  try (CallableStatement cs = c.prepareCall("{? = call bs_write(?)}")) {
                    cs.registerOutParameter(1, java.sql.Types.INTEGER);
                    cs.setString(2, "escape");
                    cs.execute();
                    return cs.getInt(1);
                  }
                }),
        Arguments.of(
            "execute",
            (Spot)
                c -> {
                  String name = "bs_p" + RESOURCES.incrementAndGet();
                  try (Statement s = c.createStatement()) {
                    s.execute("PREPARE " + name + " AS SELECT bs_write('execute')");
                    try (ResultSet rs = s.executeQuery("EXECUTE " + name)) {
                      rs.next();
                      return rs.getInt(1);
                    } finally {
                      s.execute("DEALLOCATE " + name);
                    }
                  }
                }),
        Arguments.of(
            "resultset",
            (Spot)
                c -> {
                  try (Statement s =
                          c.createStatement(
                              ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_UPDATABLE);
                      ResultSet rs = s.executeQuery("SELECT id, tag FROM bs WHERE false")) {
                    rs.moveToInsertRow();
                    rs.updateString("tag", "resultset");
                    rs.insertRow();
                    return "inserted";
                  }
                }),
        Arguments.of(
            "largeobject",
            (Spot)
                c -> {
                  LargeObjectManager lo = c.unwrap(PGConnection.class).getLargeObjectAPI();
                  lo.createLO();
                  return "created";
                }),
        Arguments.of(
            "fastpath",
            (Spot)
                c -> {
                  long oid =
                      ((Number) first(c, "SELECT 'bs_fastpath()'::regprocedure::oid")).longValue();
                  @SuppressWarnings("deprecation")
                  Fastpath fp = c.unwrap(PGConnection.class).getFastpathAPI();
                  fp.addFunction("bs_fastpath", (int) oid);
                  return fp.getInteger("bs_fastpath", new FastpathArg[0]);
                }));
  }

  private static @Nullable Object first(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getObject(1);
    }
  }

  private static Object update(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      return ps.executeUpdate();
    }
  }

  /** Rows written by the spot, large objects included. */
  private static long written(String tag) throws SQLException {
    return queryLong(plain, "SELECT count(*) FROM bs WHERE tag = ?", tag)
        + (tag.equals("largeobject")
            ? queryLong(plain, "SELECT count(*) FROM pg_largeobject_metadata")
            : 0);
  }

  private static boolean needsTransaction(String tag) {
    return tag.equals("largeobject") || tag.equals("fastpath");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("spots")
  void aZombieInATransactionIsRefusedAtTheLatestAtCommit(String tag, Spot spot) throws Exception {
    String resource = externalResource(plain, "blind-tx-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written(tag);
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      refused =
          catchThrowable(
              () -> {
                spot.run(c);
                c.commit();
              });
      c.rollback();
    }
    assertThat(refused).as(tag).isInstanceOf(StaleFencingTokenException.class);
    assertThat(written(tag)).as("%s: written by a stale token", tag).isEqualTo(before);
    assertThat(rejections(plain, resource, "stale_token")).as(tag).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("spots")
  void aZombieInAutocommitIsRefused(String tag, Spot spot) throws Exception {
    String resource = externalResource(plain, "blind-ac-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written(tag);
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced.getConnection()) {
      refused = catchThrowable(() -> spot.run(c));
      assertThat(c.getAutoCommit()).isTrue();
    }
    if (needsTransaction(tag)) {
      // handed out in a transaction only, where the commit checks what they wrote
      assertThat(refused)
          .as(tag)
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("25000"));
      assertThat(rejections(plain, resource, "stale_token")).as(tag).isZero();
    } else {
      assertThat(refused).as(tag).isInstanceOf(StaleFencingTokenException.class);
      assertThat(rejections(plain, resource, "stale_token")).as(tag).isEqualTo(1);
    }
    assertThat(written(tag)).as("%s: written by a stale token", tag).isEqualTo(before);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("spots")
  void theCurrentHolderIsAcceptedWithTheResultsOfAnUnfencedConnection(String tag, Spot spot)
      throws Exception {
    String resource = externalResource(plain, "blind-ok-" + RESOURCES.incrementAndGet(), CURRENT);
    Object unfenced;
    try (Connection c = plain.getConnection()) {
      c.setAutoCommit(false);
      unfenced = spot.run(c);
      c.commit();
    }
    for (boolean autoCommit : new boolean[] {false, true}) {
      if (autoCommit && needsTransaction(tag)) {
        continue;
      }
      long before = written(tag);
      Object seen;
      try (FencingScope scope = Fencing.bind(FencingToken.of(resource, CURRENT));
          Connection c = fenced.getConnection()) {
        c.setAutoCommit(autoCommit);
        seen = spot.run(c);
        if (!autoCommit) {
          c.commit();
        }
      }
      assertThat(seen).as("%s, autocommit %s", tag, autoCommit).isEqualTo(unfenced);
      assertThat(written(tag)).as("%s, autocommit %s", tag, autoCommit).isGreaterThan(before);
    }
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }

  // --- what the commit check does around isolation, savepoints and autosave ------------------

  @ParameterizedTest(name = "{0}")
  @MethodSource("isolations")
  void aTokenSupersededAfterTheSnapshotIsNeverAcceptedAtCommit(String name, int isolation)
      throws Exception {
    String resource = externalResource(plain, "blind-iso-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written("view");
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, CURRENT));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(isolation);
      first(c, "SELECT count(*) FROM bs"); // the snapshot, before the next holder's token
      exec(plain, "SELECT fencing.check_token(?, ?)", resource, CURRENT + 1);
      first(c, "SELECT * FROM bs_view"); // the hidden write
      refused = catchThrowable(c::commit);
      c.rollback();
    }
    assertThat(refused)
        .as(name)
        .isInstanceOfSatisfying(
            SQLException.class,
            e ->
                assertThat(
                        e instanceof StaleFencingTokenException || "40001".equals(e.getSQLState()))
                    .as("%s: %s", name, e)
                    .isTrue());
    assertThat(written("view")).as(name).isEqualTo(before);
  }

  static Stream<Arguments> isolations() {
    return Stream.of(
        Arguments.of("READ COMMITTED", Connection.TRANSACTION_READ_COMMITTED),
        Arguments.of("REPEATABLE READ", Connection.TRANSACTION_REPEATABLE_READ),
        Arguments.of("SERIALIZABLE", Connection.TRANSACTION_SERIALIZABLE));
  }

  @Test
  void aHiddenWriteRolledBackToASavepointStillCostsACheckNeverSafety() throws Exception {
    String resource = externalResource(plain, "blind-sp-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written("view");
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      first(c, "SELECT * FROM bs_view");
      java.sql.Savepoint sp = c.setSavepoint();
      first(c, "SELECT * FROM bs_view");
      c.rollback(sp);
      refused = catchThrowable(c::commit);
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(written("view")).isEqualTo(before);
  }

  @Test
  void autosaveAlwaysAFailedStatementDoesNotHideTheWriteBeforeIt() throws Exception {
    String resource = externalResource(plain, "blind-as-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written("view");
    FencedDataSource autosave = FencedDataSource.wrap(FencingTestSupport.autosaveAlways(db));
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = autosave.getConnection()) {
      c.setAutoCommit(false);
      first(c, "SELECT * FROM bs_view");
      assertThat(catchThrowable(() -> first(c, "SELECT 1/0")))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("22012"));
      refused = catchThrowable(c::commit);
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(written("view")).isEqualTo(before);
  }

  @Test
  void switchingAutocommitOnCommitsWithTheCheck() throws Exception {
    String resource = externalResource(plain, "blind-sa-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written("view");
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      first(c, "SELECT * FROM bs_view");
      refused = catchThrowable(() -> c.setAutoCommit(true));
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(written("view")).isEqualTo(before);
    assertThat(rejections(plain, resource, "stale_token")).isEqualTo(1);
  }

  @Test
  void aReadOnlyTransactionWithAStaleTokenCommitsUnchecked() throws Exception {
    String resource = externalResource(plain, "blind-ro-" + RESOURCES.incrementAndGet(), CURRENT);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(false);
      assertThat(first(c, "SELECT count(*) FROM bs")).isNotNull();
      c.commit();
      assertThat(first(c, "SELECT 42")).isEqualTo(42);
      c.commit();
    }
    assertThat(rejections(plain, resource, "stale_token")).isZero();
  }

  @Test
  void commitInSqlTextChecksWhatTheTransactionWroteFirst() throws Exception {
    String resource = externalResource(plain, "blind-ct-" + RESOURCES.incrementAndGet(), CURRENT);
    long before = written("view");
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, STALE));
        Connection c = fenced.getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      first(c, "SELECT * FROM bs_view");
      refused = catchThrowable(() -> s.execute("COMMIT"));
      assertThat(catchThrowable(() -> s.execute("COMMIT; SELECT * FROM bs_view")))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("0A000"));
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(written("view")).isEqualTo(before);
  }
}

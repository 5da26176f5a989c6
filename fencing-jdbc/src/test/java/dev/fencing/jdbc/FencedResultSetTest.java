package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.exec;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What {@link FencedResultSet} overrides, each through the real driver: an updatable result set's
 * {@code updateRow()} and {@code deleteRow()} are fenced writes (a zombie's refused, the row as it
 * was), in autocommit and in a transaction ({@code insertRow()}: {@code BlindSpotTest}); a
 * refcursor's result set from {@code getObject} is fenced too and leads back to the fenced
 * connection, whose writes a zombie's token cannot make.
 */
class FencedResultSetTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicInteger RESOURCES = new AtomicInteger();
  private static DataSource plain;
  private static FencedDataSource fenced;

  @BeforeAll
  static void schema() throws SQLException {
    FencingTestSupport.migrate(db);
    plain = db.dataSource();
    fenced = FencedDataSource.wrap(plain);
    exec(plain, "CREATE TABLE frs (id int PRIMARY KEY, tag text NOT NULL)");
    exec(
        plain,
        "CREATE FUNCTION frs_cursor() RETURNS refcursor LANGUAGE plpgsql AS"
            + " 'DECLARE c refcursor; BEGIN OPEN c FOR SELECT id, tag FROM frs; RETURN c; END'");
  }

  private static String zombieResource() throws SQLException {
    return externalResource(plain, "frs-" + RESOURCES.incrementAndGet(), 5);
  }

  @ParameterizedTest(name = "autocommit {0}")
  @ValueSource(booleans = {true, false})
  void aZombiesUpdateRowIsRefusedAndTheRowStaysAsItWas(boolean autoCommit) throws Exception {
    int id = 100 + (autoCommit ? 1 : 0);
    exec(plain, "INSERT INTO frs VALUES (?, 'before')", id);
    String resource = zombieResource();
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(autoCommit);
      try (Statement s =
              c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_UPDATABLE);
          ResultSet rs = s.executeQuery("SELECT id, tag FROM frs WHERE id = " + id)) {
        assertThat(rs.next()).isTrue();
        rs.updateString("tag", "updated");
        refused =
            catchThrowable(
                () -> {
                  rs.updateRow();
                  if (!autoCommit) {
                    c.commit();
                  }
                });
      }
      if (!autoCommit) {
        c.rollback();
      }
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(queryLong(plain, "SELECT count(*) FROM frs WHERE id = ? AND tag = 'before'", id))
        .as("the row as it was")
        .isEqualTo(1);
  }

  @ParameterizedTest(name = "autocommit {0}")
  @ValueSource(booleans = {true, false})
  void aZombiesDeleteRowIsRefusedAndTheRowStays(boolean autoCommit) throws Exception {
    int id = 200 + (autoCommit ? 1 : 0);
    exec(plain, "INSERT INTO frs VALUES (?, 'before')", id);
    String resource = zombieResource();
    Throwable refused;
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4));
        Connection c = fenced.getConnection()) {
      c.setAutoCommit(autoCommit);
      try (Statement s =
              c.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_UPDATABLE);
          ResultSet rs = s.executeQuery("SELECT id, tag FROM frs WHERE id = " + id)) {
        assertThat(rs.next()).isTrue();
        refused =
            catchThrowable(
                () -> {
                  rs.deleteRow();
                  if (!autoCommit) {
                    c.commit();
                  }
                });
      }
      if (!autoCommit) {
        c.rollback();
      }
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(queryLong(plain, "SELECT count(*) FROM frs WHERE id = ?", id))
        .as("the row still there")
        .isEqualTo(1);
  }

  /** How the test reads the refcursor column. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"getObject(int)", "getObject(String)", "getObject(int,Map)"})
  void aRefcursorsResultSetLeadsBackToTheFencedConnection(String how) throws Exception {
    int id = 300 + how.length();
    String resource = zombieResource();
    Throwable refused;
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false); // a refcursor lives in its transaction
      try (Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT frs_cursor() AS cur")) {
        assertThat(rs.next()).isTrue();
        Object value =
            switch (how) {
              case "getObject(int)" -> rs.getObject(1);
              case "getObject(String)" -> rs.getObject("cur");
              default -> rs.getObject(1, Map.of());
            };
        assertThat(value).isInstanceOf(FencedResultSet.class);
        Connection reached = ((ResultSet) value).getStatement().getConnection();
        assertThat(reached).isSameAs(c);
        try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4))) {
          refused =
              catchThrowable(
                  () -> {
                    try (Statement w = reached.createStatement()) {
                      w.executeUpdate("INSERT INTO frs VALUES (" + id + ", 'zombie')");
                    }
                    reached.commit();
                  });
        }
      }
      c.rollback();
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(queryLong(plain, "SELECT count(*) FROM frs WHERE id = ?", id)).isZero();
  }

  /**
   * A callable statement's out parameter that is a refcursor: its result set is fenced too, its
   * statement the fenced callable statement, whose connection is the fenced one (a zombie's write
   * through it refused).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"getObject(int)", "getObject(int,Map)", "getObject(int,Class)"})
  void aCallableStatementsRefcursorLeadsBackToTheFencedStatement(String how) throws Exception {
    int id = 400 + how.length();
    String resource = zombieResource();
    Throwable refused;
    try (Connection c = fenced.getConnection()) {
      c.setAutoCommit(false); // a refcursor lives in its transaction
      try (CallableStatement cs = c.prepareCall("{? = call frs_cursor()}")) {
        cs.registerOutParameter(1, Types.OTHER);
        cs.execute();
        Object value =
            switch (how) {
              case "getObject(int)" -> cs.getObject(1);
              case "getObject(int,Map)" -> cs.getObject(1, Map.of());
              default -> cs.getObject(1, ResultSet.class);
            };
        assertThat(value).isInstanceOf(FencedResultSet.class);
        Statement back = ((ResultSet) value).getStatement();
        assertThat(back).isSameAs(cs);
        Connection reached = back.getConnection();
        assertThat(reached).isSameAs(c);
        try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4))) {
          refused =
              catchThrowable(
                  () -> {
                    try (Statement w = reached.createStatement()) {
                      w.executeUpdate("INSERT INTO frs VALUES (" + id + ", 'zombie')");
                    }
                    reached.commit();
                  });
        }
      }
      c.rollback();
    }
    assertThat(refused).isInstanceOf(StaleFencingTokenException.class);
    assertThat(queryLong(plain, "SELECT count(*) FROM frs WHERE id = ?", id)).isZero();
  }

  /**
   * Under a driver wrapper made of JDK proxies (a tracing or pooling library's), the driver's
   * result set is a proxy too: it is fenced all the same, its statement the fenced one.
   */
  @Test
  void aResultSetOfADriverWrapperMadeOfJdkProxiesIsFencedToo() throws Exception {
    DataSource proxiedDriver = (DataSource) proxied(plain, DataSource.class);
    try (Connection c = FencedDataSource.wrap(proxiedDriver).getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT 1")) {
      assertThat(rs).isInstanceOf(FencedResultSet.class);
      assertThat(rs.getStatement()).isSameAs(s);
    }
  }

  /** {@code target} behind a JDK proxy of {@code type}, and so every JDBC object it returns. */
  private static Object proxied(Object target, Class<?> type) {
    return Proxy.newProxyInstance(
        FencedResultSetTest.class.getClassLoader(),
        new Class<?>[] {type},
        (self, method, args) -> {
          Object result;
          try {
            result = method.invoke(target, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          Class<?> returned = method.getReturnType();
          boolean jdbc =
              returned == Connection.class
                  || Statement.class.isAssignableFrom(returned)
                  || returned == ResultSet.class;
          return result != null && jdbc && !method.getName().equals("unwrap")
              ? proxied(result, returned)
              : result;
        });
  }
}

package dev.fencing.jdbc.reflective;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.testing.TestDatabaseExtension;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Types;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Dynamic languages (Groovy, Clojure, JRuby, Kotlin reflection) and frameworks call JDBC methods
 * through the object's runtime class: {@code c.getClass().getMethod("commit").invoke(c)}, from
 * outside the library's package. That worked on the JDK proxies the connection and its result sets
 * used to be (public classes), as on pgjdbc's and HikariCP's own (public) classes: it must work on
 * the fenced connection, result set, statement and metadata, for methods they override and for
 * those they only hand on.
 */
class RuntimeClassReflectionTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @BeforeAll
  static void migrate() {
    FencingMigrations.builder(db.migrationDataSource())
        .ownerRole(db.ownerRole())
        .applicationRole(db.appRole())
        .build()
        .migrate();
  }

  @Test
  void jdbcMethodsFoundOnTheRuntimeClassCanBeCalledFromAnotherPackage() throws Exception {
    Connection c = FencedDataSource.wrap(db.dataSource()).getConnection();
    assertThat(Modifier.isPublic(c.getClass().getModifiers())).as("public class").isTrue();
    // a method the fenced connection overrides, and one it only hands on
    call(c, "setAutoCommit", new Class<?>[] {boolean.class}, false);
    assertThat(call(c, "getAutoCommit")).isEqualTo(false);
    assertThat(call(c, "nativeSQL", new Class<?>[] {String.class}, "SELECT 1"))
        .isEqualTo("SELECT 1");
    Statement s = (Statement) call(c, "createStatement");
    assertThat(Modifier.isPublic(s.getClass().getModifiers())).as("public class").isTrue();
    assertThat(call(s, "getFetchSize")).isEqualTo(0); // handed on
    assertThat(call(s, "getConnection")).isSameAs(c);
    ResultSet rs = (ResultSet) call(s, "executeQuery", new Class<?>[] {String.class}, "SELECT 42");
    assertThat(Modifier.isPublic(rs.getClass().getModifiers())).as("public class").isTrue();
    assertThat(call(rs, "next")).isEqualTo(true);
    assertThat(call(rs, "getInt", new Class<?>[] {int.class}, 1)).isEqualTo(42);
    assertThat(call(rs, "getObject", new Class<?>[] {int.class}, 1)).isEqualTo(42);
    assertThat(call(rs, "getStatement")).isSameAs(s);
    assertThat(call(rs, "isWrapperFor", new Class<?>[] {Class.class}, ResultSet.class))
        .isEqualTo(true);
    call(rs, "close");
    // a prepared statement: a setter (handed on and recorded), an execution, a result set
    PreparedStatement ps =
        (PreparedStatement)
            call(c, "prepareStatement", new Class<?>[] {String.class}, "SELECT ?::int + 1");
    assertThat(Modifier.isPublic(ps.getClass().getModifiers())).as("public class").isTrue();
    call(ps, "setInt", new Class<?>[] {int.class, int.class}, 1, 41);
    ResultSet prs = (ResultSet) call(ps, "executeQuery");
    assertThat(prs.next()).isTrue();
    assertThat(prs.getInt(1)).isEqualTo(42);
    assertThat(call(prs, "getStatement")).isSameAs(ps);
    assertThat(call(ps, "getMaxRows")).isEqualTo(0);
    assertThat(call(ps, "isWrapperFor", new Class<?>[] {Class.class}, PreparedStatement.class))
        .isEqualTo(true);
    call(ps, "close");
    // a callable statement: an out parameter registered and read, a setter by index
    CallableStatement cs =
        (CallableStatement)
            call(c, "prepareCall", new Class<?>[] {String.class}, "{? = call abs(?)}");
    assertThat(Modifier.isPublic(cs.getClass().getModifiers())).as("public class").isTrue();
    call(cs, "registerOutParameter", new Class<?>[] {int.class, int.class}, 1, Types.INTEGER);
    call(cs, "setInt", new Class<?>[] {int.class, int.class}, 2, -7);
    call(cs, "execute");
    assertThat(call(cs, "getInt", new Class<?>[] {int.class}, 1)).isEqualTo(7);
    assertThat(call(cs, "getConnection")).isSameAs(c);
    call(cs, "close");
    DatabaseMetaData md = (DatabaseMetaData) call(c, "getMetaData");
    assertThat(call(md, "getConnection")).isSameAs(c);
    call(c, "commit");
    call(c, "close");
    call(c, "close");
    assertThat(call(c, "isClosed")).isEqualTo(true);
  }

  private static @Nullable Object call(Object target, String name) throws Exception {
    return call(target, name, new Class<?>[0]);
  }

  private static @Nullable Object call(Object target, String name, Class<?>[] types, Object... args)
      throws Exception {
    Method m = target.getClass().getMethod(name, types);
    return m.invoke(target, args);
  }
}

package dev.fencing.jpa;

import static dev.fencing.jpa.JpaFixture.refusal;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.MissingFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.Interceptor;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.SharedSessionContract;
import org.hibernate.StatelessSession;
import org.hibernate.StatelessSessionBuilder;
import org.hibernate.Transaction;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.BootstrapServiceRegistry;
import org.hibernate.boot.registry.BootstrapServiceRegistryBuilder;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.boot.registry.classloading.spi.ClassLoaderService;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.event.monitor.internal.EmptyEventMonitor;
import org.hibernate.event.monitor.spi.EventMonitor;
import org.hibernate.event.spi.EventType;
import org.hibernate.event.spi.PreUpdateEventListener;
import org.hibernate.type.Type;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A per-row entity's write is announced by {@link FencingEventMonitor} only for the time of its
 * statement: a write Hibernate skips (vetoed by another listener) or that fails before its
 * statement (an {@code Interceptor}, a listener after fencing-jpa's) leaves nothing that a native
 * write of the table, holding one row's token, could use up to change every row; in a
 * StatelessSession too, where no flush comes to clear it. And the monitor is Hibernate's only when
 * it comes first.
 */
@SuppressWarnings("try") // fencing scopes are opened for their effect on the thread
class EventMonitorTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final AtomicBoolean VETO = new AtomicBoolean();
  private static final AtomicBoolean FAIL = new AtomicBoolean();
  private static final AtomicBoolean INTERCEPTOR_FAILS = new AtomicBoolean();
  private static final AtomicInteger VETOED = new AtomicInteger();
  private static JpaFixture jpa;

  @TempDir static Path dir;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Account.class);
    PreUpdateEventListener vetoer =
        event -> {
          if (VETO.get()) {
            VETOED.incrementAndGet();
            return true;
          }
          return false;
        };
    PreUpdateEventListener failing =
        event -> {
          if (FAIL.get()) {
            throw new IllegalStateException("a listener after fencing-jpa's failed");
          }
          return false;
        };
    SessionFactoryImplementor factory = jpa.sessionFactory.unwrap(SessionFactoryImplementor.class);
    factory.getEventListenerRegistry().appendListeners(EventType.PRE_UPDATE, vetoer, failing);
  }

  @AfterEach
  void reset() {
    VETO.set(false);
    FAIL.set(false);
    INTERCEPTOR_FAILS.set(false);
    VETOED.set(0);
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  private static Account account(SharedSessionContract s, long number) {
    return s.createSelectionQuery("from Account where number = :n", Account.class)
        .setParameter("n", number)
        .getSingleResult();
  }

  @Test
  void aVetoedStatelessUpdateLeavesNoAnnouncementForANativeWrite() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> {
                    Account a = account(s, 1);
                    a.balance = 5;
                    VETO.set(true);
                    s.update(a); // vetoed: not written
                    VETO.set(false);
                    s.createNativeMutationQuery("update account set balance = 0").executeUpdate();
                  }));
    }
    assertThat(VETOED).hasValue(1);
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }

  @Test
  void aStatelessUpdateWhoseInterceptorThrowsLeavesNoAnnouncementForANativeWrite() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));
    Interceptor failing =
        new Interceptor() {
          @Override
          public void onUpdate(
              Object entity,
              @Nullable Object id,
              Object[] state,
              String[] propertyNames,
              Type[] propertyTypes) {
            if (INTERCEPTOR_FAILS.get()) {
              throw new IllegalStateException("the interceptor failed");
            }
          }
        };

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"));
        StatelessSession s =
            ((StatelessSessionBuilder)
                    jpa.sessionFactory.withStatelessOptions().interceptor(failing))
                .openStatelessSession()) {
      Transaction tx = s.beginTransaction();
      try {
        Account a = account(s, 1);
        a.balance = 5;
        INTERCEPTOR_FAILS.set(true); // after the pre-update listeners, before the statement
        assertThat(catchThrowable(() -> s.update(a))).hasMessage("the interceptor failed");
        INTERCEPTOR_FAILS.set(false);
        refusal(
            MissingFencingTokenException.class,
            () -> s.createNativeMutationQuery("update account set balance = 0").executeUpdate());
      } finally {
        if (tx.isActive()) {
          tx.rollback();
        }
      }
    }
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }

  @Test
  void aStatefulUpdateFailingAfterFencingJpasListenerLeavesNoAnnouncementForANativeWrite() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));

    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> {
                    account(s, 1).balance = 5;
                    FAIL.set(true);
                    assertThat(catchThrowable(s::flush))
                        .hasMessage("a listener after fencing-jpa's failed");
                    FAIL.set(false);
                    s.doWork( // JDBC: no auto-flush that would write the entity again
                        c -> {
                          try (Statement st = c.createStatement()) {
                            st.executeUpdate("update account set balance = 0");
                          }
                        });
                  }));
    }
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }

  /** Writes nobody vetoes pass as before, and leave nothing behind for a native write. */
  @Test
  void perRowWritesThatRunAreAcceptedAndLeaveNothingBehind() {
    try (FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      jpa.sessionFactory.inStatelessTransaction(s -> s.insert(new Account(1, 100)));
      jpa.sessionFactory.inStatelessTransaction(
          s -> {
            Account a = account(s, 1);
            a.balance = 7;
            s.update(a);
          });
      assertThat(jpa.queryLong("SELECT balance FROM account WHERE number = 1")).isEqualTo(7);
      refusal(
          MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inStatelessTransaction(
                  s -> {
                    Account a = account(s, 1);
                    a.balance = 9;
                    s.update(a);
                    s.createNativeMutationQuery("update account set balance = 0").executeUpdate();
                  }));
      assertThat(jpa.queryLong("SELECT balance FROM account WHERE number = 1")).isEqualTo(7);
      jpa.sessionFactory.inTransaction(s -> account(s, 1).balance = 8);
      assertThat(jpa.queryLong("SELECT balance FROM account WHERE number = 1")).isEqualTo(8);
      jpa.sessionFactory.inStatelessTransaction(s -> s.delete(account(s, 1)));
    }
    assertThat(jpa.count("account")).isZero();
  }

  /**
   * What a vetoed write armed in one SessionFactory is not announced by an entity write of another
   * one on the same thread, one with no per-row entity: here an unfenced mapping of the same table,
   * whose write the data source refuses as unannounced.
   */
  @Test
  void anotherSessionFactoryOnTheThreadDoesNotAnnounceWhatAVetoedWriteArmed() {
    jpa.seed("account:1", new Account(1, 100));
    jpa.seed("account:2", new Account(2, 100));
    long second = jpa.queryLong("SELECT id FROM account WHERE number = 2");

    try (SessionFactory other =
            JpaFixture.sessionFactory(
                jpa.dataSource, Map.of("hibernate.hbm2ddl.auto", "none"), AccountRow.class);
        FencingScope scope = Fencing.bind(jpa.current("account:1"))) {
      jpa.sessionFactory.inStatelessTransaction(
          s -> {
            Account a = account(s, 1);
            a.balance = 5;
            VETO.set(true);
            s.update(a); // vetoed: armed, never announced
            VETO.set(false);
          });
      refusal(
          MissingFencingTokenException.class,
          () ->
              other.inStatelessTransaction(
                  s -> {
                    AccountRow row = s.get(AccountRow.class, second);
                    row.balance = 0;
                    s.update(row);
                  }));
    }
    assertThat(VETOED).hasValue(1);
    assertThat(jpa.queryLong("SELECT sum(balance) FROM account")).isEqualTo(200);
  }

  @Test
  void anotherEventMonitorFoundFirstRefusesASessionFactoryWithPerRowEntities() throws IOException {
    ForeignEventMonitor.SESSIONS_OPENED.set(0);
    ClassLoader foreignFirst = listing(true);

    StandardServiceRegistry registry = registry(foreignFirst);
    Throwable thrown;
    try {
      assertThat(monitorsListed(registry))
          .as("what Hibernate takes the first of")
          .containsExactly(ForeignEventMonitor.class, FencingEventMonitor.class);
      thrown = catchThrowable(() -> sessionFactory(registry, Account.class).close());
    } finally {
      StandardServiceRegistryBuilder.destroy(registry);
    }
    IllegalStateException refusal = cause(thrown, IllegalStateException.class);
    assertThat(refusal.getMessage())
        .contains("[" + Account.class.getName() + "]")
        .contains(FencingEventMonitor.class.getName())
        .contains("Hibernate would use " + ForeignEventMonitor.class.getName())
        .as("the integrator judged the list Hibernate takes the first of")
        .contains(
            "found first of ["
                + ForeignEventMonitor.class.getName()
                + ", "
                + FencingEventMonitor.class.getName()
                + "]");

    // without per-row entities nothing is announced: the other monitor may serve it
    StandardServiceRegistry plainRegistry = registry(foreignFirst);
    try (SessionFactory plain = sessionFactory(plainRegistry, PlainBalance.class);
        Session s = plain.openSession()) {
      assertThat(monitor(s)).isInstanceOf(ForeignEventMonitor.class);
    } finally {
      StandardServiceRegistryBuilder.destroy(plainRegistry);
    }
    assertThat(ForeignEventMonitor.SESSIONS_OPENED).hasValue(1);
  }

  @Test
  void fencingJpasMonitorPassesTheRestToTheOneHibernateWouldHaveUsed() throws IOException {
    try (StatelessSession s = jpa.sessionFactory.openStatelessSession()) {
      EventMonitor ours = monitor(s);
      assertThat(ours).isInstanceOf(FencingEventMonitor.class);
      assertThat(((FencingEventMonitor) ours).delegate()).isInstanceOf(EmptyEventMonitor.class);
    }

    ForeignEventMonitor.SESSIONS_OPENED.set(0);
    StandardServiceRegistry registry = registry(listing(false));
    try {
      assertThat(monitorsListed(registry))
          .containsExactly(FencingEventMonitor.class, ForeignEventMonitor.class);
      try (SessionFactory after = sessionFactory(registry, Account.class);
          Session s = after.openSession()) {
        EventMonitor ours = monitor(s);
        assertThat(ours).isInstanceOf(FencingEventMonitor.class);
        assertThat(((FencingEventMonitor) ours).delegate()).isInstanceOf(ForeignEventMonitor.class);
      }
    } finally {
      StandardServiceRegistryBuilder.destroy(registry);
    }
    assertThat(ForeignEventMonitor.SESSIONS_OPENED).hasValue(1);
  }

  private static EventMonitor monitor(SharedSessionContract s) {
    return ((SharedSessionContractImplementor) s).getEventMonitor();
  }

  /** Hibernate's native bootstrap over the fixture's data source, {@code loader} first. */
  private static StandardServiceRegistry registry(ClassLoader loader) {
    BootstrapServiceRegistry bootstrap =
        new BootstrapServiceRegistryBuilder().applyClassLoader(loader).build();
    return new StandardServiceRegistryBuilder(bootstrap)
        .applySetting("hibernate.connection.datasource", jpa.dataSource)
        .applySetting("hibernate.hbm2ddl.auto", "none")
        .build();
  }

  private static SessionFactory sessionFactory(
      StandardServiceRegistry registry, Class<?>... entities) {
    MetadataSources sources = new MetadataSources(registry);
    for (Class<?> entity : entities) {
      sources.addAnnotatedClass(entity);
    }
    return sources.buildMetadata().buildSessionFactory();
  }

  /** The {@code EventMonitor}s the registry's class loading lists, in its (cached) order. */
  private static List<Class<?>> monitorsListed(StandardServiceRegistry registry) {
    return registry
        .requireService(ClassLoaderService.class)
        .loadJavaServices(EventMonitor.class)
        .stream()
        .<Class<?>>map(Object::getClass)
        .toList();
  }

  private static <T extends Throwable> T cause(Throwable thrown, Class<T> type) {
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + thrown, thrown);
  }

  /**
   * A class loader that lists {@link ForeignEventMonitor} as an {@code EventMonitor} service,
   * before or after fencing-jpa's own listing.
   */
  private static ClassLoader listing(boolean first) throws IOException {
    String name = "META-INF/services/" + EventMonitor.class.getName();
    Path file = Files.createTempFile(dir, "EventMonitor", ".services");
    Files.writeString(file, ForeignEventMonitor.class.getName() + "\n");
    URL foreign = file.toUri().toURL();
    return new ClassLoader(EventMonitorTest.class.getClassLoader()) {
      @Override
      public Enumeration<URL> getResources(String resource) throws IOException {
        Enumeration<URL> inherited = super.getResources(resource);
        if (!resource.equals(name)) {
          return inherited;
        }
        List<URL> urls = new ArrayList<>(Collections.list(inherited));
        urls.add(first ? 0 : urls.size(), foreign);
        return Collections.enumeration(urls);
      }
    };
  }
}

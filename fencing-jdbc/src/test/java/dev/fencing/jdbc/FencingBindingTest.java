package dev.fencing.jdbc;

import static dev.fencing.jdbc.FencingTestSupport.PATIENCE;
import static dev.fencing.jdbc.FencingTestSupport.externalResource;
import static dev.fencing.jdbc.FencingTestSupport.insert;
import static dev.fencing.jdbc.FencingTestSupport.nextBlock;
import static dev.fencing.jdbc.FencingTestSupport.present;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Binding tokens to threads: {@link Fencing}, {@link FencingScope}, {@link FencingContext} and
 * {@link FencingToken}. No database, except the last test, which shows a propagated token reaching
 * the fence.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class FencingBindingTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final FencingToken A1 = FencingToken.of("binding-a", 1);
  private static final FencingToken A2 = FencingToken.of("binding-a", 2);
  private static final FencingToken B7 = FencingToken.of("binding-b", 7);

  private final ExecutorService pool = Executors.newSingleThreadExecutor();

  @AfterEach
  void cleanUp() {
    pool.shutdownNow();
    assertThat(Fencing.current().isEmpty()).as("the test thread's binding after the test").isTrue();
  }

  private <T> T onPool(Callable<T> task) throws Exception {
    return pool.submit(task).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
  }

  // --- scopes ---------------------------------------------------------------------------------

  @Test
  void nothingIsBoundByDefault() {
    assertThat(Fencing.current().isEmpty()).isTrue();
    assertThat(Fencing.current().tokens()).isEmpty();
  }

  @Test
  void nestedScopesAddResourcesAndClosingRestores() {
    try (FencingScope outer = Fencing.bind(A1)) {
      assertThat(Fencing.current().tokens()).containsExactly(A1);
      try (FencingScope inner = Fencing.bind(B7)) {
        assertThat(Fencing.current().tokens()).containsExactly(A1, B7);
        assertThat(inner.context().tokens()).containsExactly(A1, B7);
      }
      assertThat(Fencing.current().tokens()).containsExactly(A1);
      assertThat(outer.context().tokens()).containsExactly(A1);
    }
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  void bindingTheSameTokenAgainNestsHarmlessly() {
    try (FencingScope outer = Fencing.bind(A1)) {
      try (FencingScope inner = Fencing.bind(A1)) {
        assertThat(Fencing.current().tokens()).containsExactly(A1);
      }
      assertThat(Fencing.current().tokens()).containsExactly(A1);
    }
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  void bindingAResourceToAnotherTokenNamesBothAndChangesNothing() {
    try (FencingScope outer = Fencing.bind(A1, B7)) {
      assertThatThrownBy(() -> Fencing.bind(A2))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("binding-a")
          .hasMessageContaining("token 1")
          .hasMessageContaining("token 2");
      assertThat(Fencing.current().tokens()).containsExactly(A1, B7);
    }
    // also within one call
    assertThatThrownBy(() -> Fencing.bind(A1, A2)).isInstanceOf(IllegalStateException.class);
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  void closingOutOfOrderThrowsAndKeepsTheBinding() {
    FencingScope outer = Fencing.bind(A1);
    FencingScope inner = Fencing.bind(B7);
    try {
      assertThatThrownBy(outer::close)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("inner scope");
      assertThat(Fencing.current().tokens()).containsExactly(A1, B7);
    } finally {
      inner.close();
      outer.close();
    }
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  /**
   * An inner scope that binds nothing new (the same token again, the current context bound again)
   * is still a scope of its own: closing the outer one first throws and unbinds nothing, rather
   * than leaving the inner scope's writes with no token bound.
   */
  @Test
  void closingOutOfOrderThrowsWhenTheInnerScopeBoundNothingNew() {
    FencingScope outer = Fencing.bind(A1);
    FencingScope again = Fencing.bind(A1);
    FencingScope rebound = Fencing.current().bind();
    try {
      assertThatThrownBy(outer::close)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("inner scope");
      assertThatThrownBy(again::close)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("inner scope");
      assertThat(Fencing.current().tokens()).containsExactly(A1);
    } finally {
      rebound.close();
      again.close();
      outer.close();
    }
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  void closingOnAnotherThreadThrowsAndKeepsTheBinding() throws Exception {
    FencingScope scope = Fencing.bind(A1);
    try {
      Future<?> closed = pool.submit(() -> scope.close());
      assertThatThrownBy(() -> closed.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("another thread");
      assertThat(Fencing.current().tokens()).containsExactly(A1);
    } finally {
      scope.close();
    }
    assertThat(Fencing.current().isEmpty()).isTrue();
  }

  @Test
  void closingTwiceIsHarmlessAndDoesNotUnbindALaterScope() {
    FencingScope first = Fencing.bind(A1);
    first.close();
    first.close();
    assertThat(Fencing.current().isEmpty()).isTrue();

    try (FencingScope later = Fencing.bind(B7)) {
      first.close();
      assertThat(Fencing.current().tokens()).containsExactly(B7);
    }
  }

  // --- other threads --------------------------------------------------------------------------

  @Test
  void anotherThreadSeesNoTokensUnlessPropagated() throws Exception {
    try (FencingScope scope = Fencing.bind(A1)) {
      assertThat(onPool(() -> Fencing.current().isEmpty())).isTrue();
    }
  }

  @Test
  void wrappedExecutorCarriesTheSubmittersTokensAndThePoolThreadHasNoneAfterwards()
      throws Exception {
    Executor fenced = Fencing.wrap(pool);
    AtomicReference<List<FencingToken>> seen = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    try (FencingScope scope = Fencing.bind(A1, B7)) {
      fenced.execute(
          () -> {
            try {
              go.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            seen.set(Fencing.current().tokens());
            ran.countDown();
          });
    }
    // the tokens were taken when the task was submitted, not when it runs
    go.countDown();
    assertThat(ran.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(seen.get()).containsExactly(A1, B7);
    assertThat(onPool(() -> Fencing.current().isEmpty())).isTrue();
  }

  @Test
  void wrappedCallableCarriesTheContextItWasMadeFrom() throws Exception {
    FencingContext context;
    Callable<List<FencingToken>> viaFencing;
    try (FencingScope scope = Fencing.bind(B7)) {
      context = Fencing.current();
      viaFencing = Fencing.wrap(() -> Fencing.current().tokens());
    }
    assertThat(onPool(context.wrap(() -> Fencing.current().tokens()))).containsExactly(B7);
    assertThat(onPool(viaFencing)).containsExactly(B7);
    assertThat(onPool(() -> Fencing.current().isEmpty())).isTrue();

    // explicit propagation
    assertThat(
            onPool(
                () -> {
                  try (FencingScope scope = context.bind()) {
                    return Fencing.current().tokens();
                  }
                }))
        .containsExactly(B7);
    assertThat(onPool(() -> Fencing.current().isEmpty())).isTrue();
  }

  @Test
  void tokensDoNotLeakToTheNextTaskWhenATaskFails() throws Exception {
    Future<?> failed;
    try (FencingScope scope = Fencing.bind(A1)) {
      failed =
          pool.submit(
              Fencing.wrap(
                  (Runnable)
                      () -> {
                        throw new IllegalArgumentException("task failed");
                      }));
    }
    assertThatThrownBy(() -> failed.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
        .hasCauseInstanceOf(IllegalArgumentException.class);
    assertThat(onPool(() -> Fencing.current().isEmpty())).isTrue();
  }

  @Test
  void tokensDoNotLeakToTheNextTaskWhenATaskLeavesAScopeOpen() throws Exception {
    // a task that forgets to close its own scope must not fence the next task on that thread
    Future<?> sloppy;
    try (FencingScope scope = Fencing.bind(A1)) {
      sloppy = pool.submit(Fencing.wrap((Runnable) () -> Fencing.bind(B7)));
    }
    catchThrowable(() -> sloppy.get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
    assertThat(onPool(() -> Fencing.current().tokens())).isEmpty();
  }

  // --- tokens ---------------------------------------------------------------------------------

  @Test
  void tokensMustBePositiveAndNameAResource() {
    assertThatThrownBy(() -> FencingToken.of("r", 0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FencingToken.of("r", -1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FencingToken.of("", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new FencingToken(null, 1)).isInstanceOf(NullPointerException.class);
    assertThat(FencingToken.of("r", 1)).isEqualTo(new FencingToken("r", 1));
    assertThat(FencingToken.of("r", Long.MAX_VALUE).value()).isEqualTo(Long.MAX_VALUE);
  }

  // --- with the database ----------------------------------------------------------------------

  @Test
  void aTokenPropagatedToAPoolThreadFencesItsWrites() throws Exception {
    DataSource plain = db.dataSource();
    FencingTestSupport.migrate(db);
    FencingTestSupport.createTestSchema(plain);
    String resource = externalResource(plain, "propagated", 5);
    FencedDataSource fenced = FencedDataSource.wrap(plain);
    int base = nextBlock();
    Executor propagating = Fencing.wrap(pool);

    AtomicReference<Throwable> outcome = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    try (FencingScope scope = Fencing.bind(FencingToken.of(resource, 4))) {
      propagating.execute(
          () -> {
            try (Connection c = fenced.getConnection()) {
              insert(c, base);
            } catch (SQLException | RuntimeException e) {
              outcome.set(e);
            } finally {
              done.countDown();
            }
          });
    }
    assertThat(done.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(outcome.get()).isInstanceOf(StaleFencingTokenException.class);
    assertThat(present(plain, base)).isFalse();

    // the same thread, not wrapped: no token, not fenced
    onPool(
        () -> {
          try (Connection c = fenced.getConnection()) {
            insert(c, base + 1);
          }
          return null;
        });
    assertThat(present(plain, base + 1)).isTrue();
  }
}

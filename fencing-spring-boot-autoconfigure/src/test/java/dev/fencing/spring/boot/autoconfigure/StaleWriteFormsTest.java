package dev.fencing.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingExceptions;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.FencingToken;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabase;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcClientAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.namedparam.SqlParameterSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Attacks that held: a superseded token bound on the thread, Spring's write forms ({@code
 * batchUpdate}, {@code NamedParameterJdbcTemplate} batches, {@code JdbcClient}) and propagations
 * ({@code REQUIRES_NEW}, {@code NOT_SUPPORTED}, {@code NESTED} inside a transaction) are each
 * refused, and nothing of them is written. (Under {@code NESTED} the refusal reaches the caller as
 * the cause of the failed rollback to the savepoint, in a {@code TransactionSystemException}: see
 * {@link NestedRefusalTest}.)
 */
class StaleWriteFormsTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DataSourceAutoConfiguration.class,
                  JdbcTemplateAutoConfiguration.class,
                  JdbcClientAutoConfiguration.class,
                  DataSourceTransactionManagerAutoConfiguration.class,
                  FencingAutoConfiguration.class));

  @Test
  void everyFormIsRefusedWithASupersededToken() throws Exception {
    try (TestDatabase db = TestDatabase.create("stale_write_forms")) {
      PerClassDatabase.execute(
          db, "CREATE TABLE form_entry (id serial PRIMARY KEY, text text NOT NULL)");
      runner
          .withPropertyValues(PerClassDatabase.properties(db))
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                NamedParameterJdbcTemplate named =
                    context.getBean(NamedParameterJdbcTemplate.class);
                JdbcClient client = context.getBean(JdbcClient.class);
                String insert = "INSERT INTO form_entry (text) VALUES (?)";
                Map<String, Consumer<ApplicationContext>> forms =
                    Map.of(
                        "batchUpdate",
                        c -> jdbc.batchUpdate(insert, List.<Object[]>of(new Object[] {"batch"})),
                        "named batch",
                        c ->
                            named.batchUpdate(
                                "INSERT INTO form_entry (text) VALUES (:t)",
                                new SqlParameterSource[] {new MapSqlParameterSource("t", "named")}),
                        "jdbc client",
                        c -> client.sql(insert).param("client").update(),
                        "requires new",
                        c -> propagation(c, TransactionDefinition.PROPAGATION_REQUIRES_NEW, jdbc),
                        "not supported",
                        c -> propagation(c, TransactionDefinition.PROPAGATION_NOT_SUPPORTED, jdbc),
                        "nested",
                        c -> propagation(c, TransactionDefinition.PROPAGATION_NESTED, jdbc));
                LeaseClient leases = context.getBean(LeaseClient.class);
                for (Map.Entry<String, Consumer<ApplicationContext>> form : forms.entrySet()) {
                  try (Superseded zombie = Superseded.take(leases, "forms")) {
                    FencingToken stale = zombie.stale();
                    Throwable refused;
                    try (FencingScope scope = Fencing.bind(stale)) {
                      refused = catchThrowable(() -> form.getValue().accept(context));
                    }
                    assertThat(FencingExceptions.find(refused))
                        .as("%s with a superseded token bound: %s", form.getKey(), refused)
                        .get()
                        .isInstanceOf(StaleFencingTokenException.class);
                  }
                }
                assertThat(jdbc.queryForObject("SELECT count(*) FROM form_entry", Long.class))
                    .isZero();
              });
    }
  }

  /** In an outer transaction, the insert in an inner one of {@code propagation}. */
  private static void propagation(ApplicationContext context, int propagation, JdbcTemplate jdbc) {
    PlatformTransactionManager manager = context.getBean(PlatformTransactionManager.class);
    TransactionTemplate inner = new TransactionTemplate(manager);
    inner.setPropagationBehavior(propagation);
    new TransactionTemplate(manager)
        .executeWithoutResult(
            outer ->
                inner.executeWithoutResult(
                    status -> jdbc.update("INSERT INTO form_entry (text) VALUES ('inner')")));
  }
}

package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import java.util.Map;
import org.hibernate.SessionFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A wrong {@link Fenced} stops Hibernate from starting, with a message naming the entity. */
class FencedAnnotationValidationTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Entity(name = "BothValueAndAttribute")
  @Fenced(value = "ledger", attribute = "id")
  static class BothValueAndAttribute {
    @Id long id;
  }

  @Entity(name = "NeitherValueNorAttribute")
  @Fenced
  static class NeitherValueNorAttribute {
    @Id long id;
  }

  @Entity(name = "PrefixWithValue")
  @Fenced(value = "ledger", prefix = "account:")
  static class PrefixWithValue {
    @Id long id;
  }

  @Entity(name = "UnknownAttribute")
  @Fenced(prefix = "account:", attribute = "numbr")
  static class UnknownAttribute {
    @Id long id;
    long number;
  }

  @Entity(name = "AssociationAttribute")
  @Fenced(prefix = "owner:", attribute = "owner")
  static class AssociationAttribute {
    @Id long id;
    @ManyToOne @Nullable Person owner;
  }

  @Entity(name = "ListenerWithoutFenced")
  @EntityListeners(FencedEntityListener.class)
  static class ListenerWithoutFenced {
    @Id long id;
  }

  @Test
  void bothValueAndAttribute() {
    assertThat(bootFailure(BothValueAndAttribute.class))
        .contains(BothValueAndAttribute.class.getName(), "exactly one of value");
  }

  @Test
  void neitherValueNorAttribute() {
    assertThat(bootFailure(NeitherValueNorAttribute.class))
        .contains(NeitherValueNorAttribute.class.getName(), "exactly one of value");
  }

  @Test
  void prefixWithValue() {
    assertThat(bootFailure(PrefixWithValue.class))
        .contains(PrefixWithValue.class.getName(), "prefix goes with attribute only");
  }

  @Test
  void unknownAttribute() {
    assertThat(bootFailure(UnknownAttribute.class))
        .contains(UnknownAttribute.class.getName(), "attribute numbr does not exist", "number");
  }

  @Test
  void associationAttribute() {
    assertThat(bootFailure(AssociationAttribute.class, Person.class))
        .contains(AssociationAttribute.class.getName(), "attribute owner is not a basic attribute");
  }

  @Test
  void entityListenerWithoutFenced() {
    assertThat(bootFailure(ListenerWithoutFenced.class))
        .contains(ListenerWithoutFenced.class.getName(), "FencedEntityListener", "@Fenced");
  }

  @Test
  void validAnnotationsBoot() {
    try (SessionFactory sf =
        JpaFixture.sessionFactory(
            db.dataSource(),
            Map.of(),
            LedgerEntry.class,
            Account.class,
            Wallet.class,
            Memo.class)) {
      assertThat(sf.isOpen()).isTrue();
    }
  }

  /** Every message in the chain of the failure to start Hibernate with {@code entities}. */
  private static String bootFailure(Class<?>... entities) {
    Throwable thrown =
        catchThrowable(
            () -> JpaFixture.sessionFactory(db.dataSource(), Map.of(), entities).close());
    assertThat(thrown).as("Hibernate must refuse to start").isNotNull();
    StringBuilder messages = new StringBuilder();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      messages.append(t.getMessage()).append('\n');
    }
    return messages.toString();
  }
}

package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What one {@link FencedDataSource} remembers to choose a check's form ({@link CheckForms}): a
 * resource whose fast form fell through is checked by {@code check_one} alone for {@value
 * CheckForms#SLOW_CHECKS} checks, then by the fast form again, and nothing is left of it.
 */
class CheckFormsTest {
  private static List<FencingContext.Binding> one(String resource) {
    return List.of(new FencingContext.Binding(FencingToken.of(resource, 7), null));
  }

  /** The form for {@code resource} now, learning the key space when it is the learning form. */
  private static CheckForms.Kind next(CheckForms forms, String resource) {
    CheckForms.Form f = forms.form(one(resource));
    if (f.kind() == CheckForms.Kind.LEARN) {
      forms.returned(f, resource, 0, 5);
      f = forms.form(one(resource));
    }
    return f.kind();
  }

  @Test
  void aSlowResourceIsForgottenOnceItsChecksAreSpent() {
    CheckForms forms = new CheckForms("fencing");
    assertThat(next(forms, "r")).isEqualTo(CheckForms.Kind.FAST);
    // the fast form fell through (check_one returned 0: accepted, nothing advanced)
    forms.returned(forms.form(one("r")), "r", 0, null);
    assertThat(forms.slowResources()).isOne();
    for (int i = 0; i < CheckForms.SLOW_CHECKS; i++) {
      assertThat(next(forms, "r"))
          .as("check %d after the fall-through", i)
          .isEqualTo(CheckForms.Kind.ONE);
    }
    assertThat(next(forms, "r")).isEqualTo(CheckForms.Kind.FAST);
    assertThat(forms.slowResources()).as("nothing left to decrement").isZero();
    assertThat(next(forms, "r")).isEqualTo(CheckForms.Kind.FAST);
    assertThat(next(forms, "other")).isEqualTo(CheckForms.Kind.FAST);
  }
}

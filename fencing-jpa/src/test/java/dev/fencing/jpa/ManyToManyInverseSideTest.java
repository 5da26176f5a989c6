package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.StaleFencingTokenException;
import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinTable;
import jakarta.persistence.ManyToMany;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code @ManyToMany} whose join table belongs to the side that owns it. When only the inverse
 * side ({@code mappedBy}) is {@link Fenced}, the join table's rows are the unfenced owner's
 * collection: Hibernate writes them for the owner's collection only, and JPA reads the relationship
 * from the owning side. So the join table is not declared, and its rows are written with no token,
 * by design (pinned here, as it was before: green before and after); the fenced entity's own rows
 * stay fenced, and its inverse collection writes nothing. Fencing the relationship means fencing
 * the side that owns it, whose join table is then declared: a zombie is refused there.
 */
@SuppressWarnings("try") // scopes are opened for their effect on the thread
class ManyToManyInverseSideTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  /** Fenced, the inverse side: its students are the students' collection. */
  @Entity(name = "Course")
  @Fenced("courses")
  static class Course {
    @Id long id;
    String title = "";

    @ManyToMany(mappedBy = "courses")
    Set<Student> students = new HashSet<>();

    Course() {}

    Course(long id, String title) {
      this.id = id;
      this.title = title;
    }
  }

  /** Not fenced, the owning side: writes the join table {@code enrolment}. */
  @Entity(name = "Student")
  static class Student {
    @Id long id;

    @ManyToMany
    @JoinTable(name = "enrolment")
    Set<Course> courses = new HashSet<>();

    Student() {}

    Student(long id) {
      this.id = id;
    }
  }

  /** Fenced, the owning side: its join table {@code guild_member} is declared. */
  @Entity(name = "Guild")
  @Fenced("guilds")
  static class Guild {
    @Id long id;

    @ManyToMany
    @JoinTable(name = "guild_member")
    Set<Member> members = new HashSet<>();

    Guild() {}

    Guild(long id) {
      this.id = id;
    }
  }

  /** Not fenced, the inverse side. */
  @Entity(name = "Member")
  static class Member {
    @Id long id;

    @ManyToMany(mappedBy = "members")
    Set<Guild> guilds = new HashSet<>();

    Member() {}

    Member(long id) {
      this.id = id;
    }
  }

  private static JpaFixture jpa;

  @BeforeAll
  static void start() {
    jpa = JpaFixture.start(db, Course.class, Student.class, Guild.class, Member.class);
  }

  @AfterEach
  void reset() {
    jpa.reset();
  }

  @AfterAll
  static void stop() {
    jpa.close();
  }

  /** Course 1, and student 1 enrolled in it (the enrolment written with no token). */
  private static void enrol() {
    jpa.seed("courses", new Course(1, "maths"));
    jpa.sessionFactory.inTransaction(
        s -> {
          Student student = new Student(1);
          student.courses.add(s.find(Course.class, 1L));
          s.persist(student);
        });
    assertThat(jpa.count("enrolment")).isEqualTo(1);
  }

  @Nested
  class OnlyTheInverseSideFenced {
    @Test
    void theOwnersJoinTableRowsAreWrittenWithNoTokenByDesign() {
      enrol();
      assertThat(Fencing.current().isEmpty()).isTrue();
      jpa.sessionFactory.inTransaction(s -> s.find(Student.class, 1L).courses.clear());
      assertThat(jpa.count("enrolment")).isZero();
      jpa.sessionFactory.inTransaction(
          s -> s.find(Student.class, 1L).courses.add(s.find(Course.class, 1L)));
      assertThat(jpa.count("enrolment")).isEqualTo(1);
      jpa.sessionFactory.inTransaction(
          s -> s.createNativeMutationQuery("DELETE FROM enrolment").executeUpdate());
      assertThat(jpa.count("enrolment")).isZero();
      assertThat(JpaFixture.query(jpa.pool, "SELECT title FROM course WHERE id = 1"))
          .isEqualTo("maths");
    }

    @Test
    void theInverseCollectionWritesNothing() {
      enrol();
      jpa.sessionFactory.inTransaction(s -> s.find(Course.class, 1L).students.clear());
      assertThat(jpa.count("enrolment")).isEqualTo(1);
    }

    @Test
    void aZombieCannotWriteTheFencedSidesRows() {
      enrol();
      try (FencingScope scope = Fencing.bind(jpa.stale("courses"))) {
        JpaFixture.refusal(
            StaleFencingTokenException.class,
            () -> jpa.sessionFactory.inTransaction(s -> s.find(Course.class, 1L).title = "zombie"));
        JpaFixture.refusal(
            StaleFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s ->
                        s.createNativeMutationQuery("UPDATE course SET title = 'zombie'")
                            .executeUpdate()));
      }
      assertThat(JpaFixture.query(jpa.pool, "SELECT title FROM course WHERE id = 1"))
          .isEqualTo("maths");
      assertThat(jpa.count("enrolment")).isEqualTo(1);
    }

    @Test
    void theHolderWritesTheFencedSidesRows() {
      enrol();
      try (FencingScope scope = Fencing.bind(jpa.current("courses"))) {
        jpa.sessionFactory.inTransaction(s -> s.find(Course.class, 1L).title = "physics");
      }
      assertThat(JpaFixture.query(jpa.pool, "SELECT title FROM course WHERE id = 1"))
          .isEqualTo("physics");
      assertThat(jpa.count("enrolment")).isEqualTo(1);
    }
  }

  @Nested
  class TheOwningSideFenced {
    /** Guild 1 with member 1, written by the current holder of {@code guilds}. */
    private void join() {
      Member member = new Member(1);
      Guild guild = new Guild(1);
      guild.members.add(member);
      jpa.seed("guilds", member, guild);
      assertThat(jpa.count("guild_member")).isEqualTo(1);
    }

    @Test
    void aZombieCannotWriteTheJoinTable() {
      join();
      try (FencingScope scope = Fencing.bind(jpa.stale("guilds"))) {
        JpaFixture.refusal(
            StaleFencingTokenException.class,
            () -> jpa.sessionFactory.inTransaction(s -> s.find(Guild.class, 1L).members.clear()));
        JpaFixture.refusal(
            StaleFencingTokenException.class,
            () ->
                jpa.sessionFactory.inTransaction(
                    s -> s.createNativeMutationQuery("DELETE FROM guild_member").executeUpdate()));
      }
      assertThat(jpa.count("guild_member")).isEqualTo(1);
    }

    @Test
    void theJoinTableNeedsTheOwnersToken() {
      join();
      JpaFixture.refusal(
          dev.fencing.jdbc.MissingFencingTokenException.class,
          () ->
              jpa.sessionFactory.inTransaction(
                  s -> s.createNativeMutationQuery("DELETE FROM guild_member").executeUpdate()));
      assertThat(jpa.count("guild_member")).isEqualTo(1);
      try (FencingScope scope = Fencing.bind(jpa.current("guilds"))) {
        jpa.sessionFactory.inTransaction(s -> s.find(Guild.class, 1L).members.clear());
      }
      assertThat(jpa.count("guild_member")).isZero();
    }
  }
}

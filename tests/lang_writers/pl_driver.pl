# The Perl side of tests/lang_writers: fires values.json's emissions through the
# generated module's Writer, then prints the writer's counts as JSON.
#
#   perl pl_driver.pl GEN_DIR VALUES.json TO ENTITIES_JSON send
#   perl pl_driver.pl GEN_DIR VALUES.json TO - full N MAX_BUFFER  (no collector: drops counted)
#   perl pl_driver.pl GEN_DIR VALUES.json TO ENTITIES_JSON restart HALF_FILE GO_FILE
#   perl pl_driver.pl GEN_DIR VALUES.json TO ENTITIES_JSON probes GO_FILE
#       (waits for GO_FILE, fires, then a Job record alone)
use strict;
use warnings;
use JSON::PP ();
use Time::HiRes ();

my ($gen, $values, $to, $ents_json, $mode, @rest) = @ARGV;
die "usage: pl_driver.pl GEN VALUES TO ENTS MODE ...\n" unless defined $mode;
unshift @INC, $gen;
require wtest_records;

my $json = JSON::PP->new->utf8->canonical;
open(my $vf, '<:raw', $values) or die "$values: $!\n";
my $emissions = $json->decode(do { local $/; <$vf> })->{emissions};

if ($mode eq 'full') {
    my ($n, $cap) = @rest;
    my $w = wtest_records::Writer->new($to, max_buffer => $cap);
    my $rec = wtest_records::Phase->new(worker => wtest_records::EntityRef->new(1, 2),
                                        phase => 'x');
    my $queued = 0;
    $queued += $w->emit($rec, 'WorkerPhase') for 1 .. $n;
    my $ok = $w->close(0.2);
    print $json->encode({queued => $queued, dropped => $w->dropped,
                         closed_ok => $ok ? JSON::PP::true : JSON::PP::false,
                         error => $w->error}), "\n";
    exit 0;
}

my $ents = $json->decode($ents_json);

sub record {
    my ($e) = @_;
    my $cls = $wtest_records::RECORDS{$e->{record}} or die "no record $e->{record}\n";
    my %types = map { $_->[0] => $_->[1] } $cls->fields;
    my %kw;
    for my $k (keys %{$e->{values}}) {
        my $v = $e->{values}{$k};
        if ($types{$k} eq 'entity') {
            $v = defined $v ? wtest_records::EntityRef->new("$ents->{$v}[0]", "$ents->{$v}[1]")
                            : wtest_records::EntityRef->new;
        } elsif ($types{$k} eq 'bytes') {
            $v = pack('H*', $v);
        } elsif ($types{$k} eq 'bool') {
            $v = $v ? 1 : 0;
        } elsif ($types{$k} =~ /int/) {
            $v = "$v";
        }
        $kw{$k} = $v;
    }
    return $cls->new(%kw);
}

my $w = wtest_records::Writer->new($to, token => $ENV{WRITER_TOKEN} // '');
if ($mode eq 'probes') {
    # The fake collector switches a sensor off, then creates GO_FILE: serve it meanwhile.
    my $deadline = Time::HiRes::time() + 60;
    $w->pump(0.02) until -e $rest[0] || Time::HiRes::time() > $deadline;
}
my @todo = @$emissions;
if ($mode eq 'restart') {
    # Half, acknowledged; the test restarts the collector; then the other half.
    my ($half_file, $go_file) = @rest;
    my $half = int(@todo / 2);
    $w->emit(record($_), $_->{sensor}) for @todo[0 .. $half - 1];
    my $flushed = $w->flush(20);
    # Written whole, then renamed: the test polls for the name.
    open(my $h, '>', "$half_file.tmp") or die "$half_file.tmp: $!\n";
    print {$h} $flushed ? 'flushed' : 'not flushed';
    close $h or die "$half_file.tmp: $!\n";
    rename("$half_file.tmp", $half_file) or die "$half_file: $!\n";
    my $deadline = Time::HiRes::time() + 60;
    Time::HiRes::sleep(0.02) until -e $go_file || Time::HiRes::time() > $deadline;
    @todo = @todo[$half .. $#todo];
}
$w->emit(record($_), $_->{sensor}) for @todo;
$w->emit(wtest_records::Job->new) if $mode eq 'probes';
my $ok = $w->close(20);
print $json->encode({sent => $w->sent, dropped => $w->dropped, off => $w->off,
                     closed_ok => $ok ? JSON::PP::true : JSON::PP::false,
                     acked_seq => $w->acked_seq, error => $w->error}), "\n";

let __mtrace_site_0 = Mtrace_lwt.site "vocabulary.ml:5:4"
let __mtrace_site_1 = Mtrace_lwt.site "vocabulary.ml:5:14"
let __mtrace_site_2 = Mtrace_lwt.site "vocabulary.ml:5:23"
let __mtrace_site_3 = Mtrace_lwt.site "vocabulary.ml:5:34"
let __mtrace_site_4 = Mtrace_lwt.site "vocabulary.ml:5:48"
let __mtrace_site_5 = Mtrace_lwt.site "vocabulary.ml:5:62"
let __mtrace_site_6 = Mtrace_lwt.site "vocabulary.ml:5:72"
let __mtrace_site_7 = Mtrace_lwt.site "vocabulary.ml:5:81"
let __mtrace_site_8 = Mtrace_lwt.site "vocabulary.ml:6:4"
let __mtrace_site_9 = Mtrace_lwt.site "vocabulary.ml:6:14"
let __mtrace_site_10 = Mtrace_lwt.site "vocabulary.ml:6:25"
let __mtrace_site_11 = Mtrace_lwt.site "vocabulary.ml:6:37"
let __mtrace_site_12 = Mtrace_lwt.site "vocabulary.ml:6:50"
let __mtrace_site_13 = Mtrace_lwt.site "vocabulary.ml:6:69"
let __mtrace_site_14 = Mtrace_lwt.site "vocabulary.ml:6:80"
let __mtrace_site_15 = Mtrace_lwt.site "vocabulary.ml:7:4"
let __mtrace_site_16 = Mtrace_lwt.site "vocabulary.ml:7:15"
let __mtrace_site_17 = Mtrace_lwt.site "vocabulary.ml:7:26"
let __mtrace_site_18 = Mtrace_lwt.site "vocabulary.ml:7:37"
let __mtrace_site_19 = Mtrace_lwt.site "vocabulary.ml:7:48"
let __mtrace_site_20 = Mtrace_lwt.site "vocabulary.ml:7:59"
let __mtrace_site_21 = Mtrace_lwt.site "vocabulary.ml:7:70"
let __mtrace_site_22 = Mtrace_lwt.site "vocabulary.ml:7:81"
let __mtrace_site_23 = Mtrace_lwt.site "vocabulary.ml:8:4"
let __mtrace_site_24 = Mtrace_lwt.site "vocabulary.ml:8:20"
let __mtrace_site_25 = Mtrace_lwt.site "vocabulary.ml:8:36"
let __mtrace_site_26 = Mtrace_lwt.site "vocabulary.ml:8:56"
let __mtrace_site_27 = Mtrace_lwt.site "vocabulary.ml:8:68"
let __mtrace_site_28 = Mtrace_lwt.site "vocabulary.ml:8:79"
let __mtrace_site_29 = Mtrace_lwt.site "vocabulary.ml:9:4"
let __mtrace_site_30 = Mtrace_lwt.site "vocabulary.ml:9:14"
let __mtrace_site_31 = Mtrace_lwt.site "vocabulary.ml:9:24"
let __mtrace_site_32 = Mtrace_lwt.site "vocabulary.ml:9:39"
let __mtrace_site_33 = Mtrace_lwt.site "vocabulary.ml:11:4"
let __mtrace_site_34 = Mtrace_lwt.site "vocabulary.ml:11:21"
let __mtrace_site_35 = Mtrace_lwt.site "vocabulary.ml:11:38"
let __mtrace_site_36 = Mtrace_lwt.site "vocabulary.ml:11:56"
let __mtrace_site_37 = Mtrace_lwt.site "vocabulary.ml:11:74"
let __mtrace_site_38 = Mtrace_lwt.site "vocabulary.ml:12:4"
let __mtrace_site_39 = Mtrace_lwt.site "vocabulary.ml:12:20"
let __mtrace_site_40 = Mtrace_lwt.site "vocabulary.ml:12:37"
let __mtrace_site_41 = Mtrace_lwt.site "vocabulary.ml:12:54"
let __mtrace_site_42 = Mtrace_lwt.site "vocabulary.ml:12:74"
let __mtrace_site_43 = Mtrace_lwt.site "vocabulary.ml:13:4"
let __mtrace_site_44 = Mtrace_lwt.site "vocabulary.ml:13:26"
let __mtrace_site_45 = Mtrace_lwt.site "vocabulary.ml:13:49"
let __mtrace_site_46 = Mtrace_lwt.site "vocabulary.ml:13:69"
let __mtrace_site_47 = Mtrace_lwt.site "vocabulary.ml:14:4"
let __mtrace_site_48 = Mtrace_lwt.site "vocabulary.ml:14:23"
let __mtrace_site_49 = Mtrace_lwt.site "vocabulary.ml:14:42"
let __mtrace_site_50 = Mtrace_lwt.site "vocabulary.ml:14:59"
let __mtrace_site_51 = Mtrace_lwt.site "vocabulary.ml:14:78"
let __mtrace_site_52 = Mtrace_lwt.site "vocabulary.ml:15:4"
let __mtrace_site_53 = Mtrace_lwt.site "vocabulary.ml:15:27"
let __mtrace_site_54 = Mtrace_lwt.site "vocabulary.ml:15:50"
let __mtrace_site_55 = Mtrace_lwt.site "vocabulary.ml:15:72"
let __mtrace_site_56 = Mtrace_lwt.site "vocabulary.ml:17:4"
let __mtrace_site_57 = Mtrace_lwt.site "vocabulary.ml:17:21"
let __mtrace_site_58 = Mtrace_lwt.site "vocabulary.ml:17:37"
let __mtrace_site_59 = Mtrace_lwt.site "vocabulary.ml:17:54"
let __mtrace_site_60 = Mtrace_lwt.site "vocabulary.ml:17:71"
let __mtrace_site_61 = Mtrace_lwt.site "vocabulary.ml:18:4"
let __mtrace_site_62 = Mtrace_lwt.site "vocabulary.ml:18:22"
let __mtrace_site_63 = Mtrace_lwt.site "vocabulary.ml:18:40"
let __mtrace_site_64 = Mtrace_lwt.site "vocabulary.ml:18:61"
let __mtrace_site_65 = Mtrace_lwt.site "vocabulary.ml:18:81"
let __mtrace_site_66 = Mtrace_lwt.site "vocabulary.ml:19:4"
let __mtrace_site_67 = Mtrace_lwt.site "vocabulary.ml:19:23"
let __mtrace_site_68 = Mtrace_lwt.site "vocabulary.ml:19:42"
let __mtrace_site_69 = Mtrace_lwt.site "vocabulary.ml:19:61"
let __mtrace_site_70 = Mtrace_lwt.site "vocabulary.ml:19:78"
let __mtrace_site_71 = Mtrace_lwt.site "vocabulary.ml:20:4"
let __mtrace_site_72 = Mtrace_lwt.site "vocabulary.ml:20:21"
let __mtrace_site_73 = Mtrace_lwt.site "vocabulary.ml:20:40"
let __mtrace_site_74 = Mtrace_lwt.site "vocabulary.ml:20:61"
let __mtrace_site_75 = Mtrace_lwt.site "vocabulary.ml:21:4"
let __mtrace_site_76 = Mtrace_lwt.site "vocabulary.ml:21:22"
let __mtrace_site_77 = Mtrace_lwt.site "vocabulary.ml:21:43"
let __mtrace_site_78 = Mtrace_lwt.site "vocabulary.ml:21:68"
let __mtrace_site_79 = Mtrace_lwt.site "vocabulary.ml:22:4"
let __mtrace_site_80 = Mtrace_lwt.site "vocabulary.ml:22:25"
let __mtrace_site_81 = Mtrace_lwt.site "vocabulary.ml:22:46"
let __mtrace_site_82 = Mtrace_lwt.site "vocabulary.ml:22:65"
let __mtrace_site_83 = Mtrace_lwt.site "vocabulary.ml:23:4"
let __mtrace_site_84 = Mtrace_lwt.site "vocabulary.ml:23:26"
let __mtrace_site_85 = Mtrace_lwt.site "vocabulary.ml:23:50"
let __mtrace_site_86 = Mtrace_lwt.site "vocabulary.ml:23:73"
let __mtrace_site_87 = Mtrace_lwt.site "vocabulary.ml:24:4"
let __mtrace_site_88 = Mtrace_lwt.site "vocabulary.ml:24:22"
let __mtrace_site_89 = Mtrace_lwt.site "vocabulary.ml:26:4"
let __mtrace_site_90 = Mtrace_lwt.site "vocabulary.ml:26:18"
let __mtrace_site_91 = Mtrace_lwt.site "vocabulary.ml:26:34"
let __mtrace_site_92 = Mtrace_lwt.site "vocabulary.ml:26:50"
let __mtrace_site_93 = Mtrace_lwt.site "vocabulary.ml:26:66"
let __mtrace_site_94 = Mtrace_lwt.site "vocabulary.ml:27:4"
let __mtrace_site_95 = Mtrace_lwt.site "vocabulary.ml:27:25"
let __mtrace_site_96 = Mtrace_lwt.site "vocabulary.ml:27:42"
let __mtrace_site_97 = Mtrace_lwt.site "vocabulary.ml:27:57"
let __mtrace_site_98 = Mtrace_lwt.site "vocabulary.ml:27:75"
let __mtrace_site_99 = Mtrace_lwt.site "vocabulary.ml:28:4"
let __mtrace_site_100 = Mtrace_lwt.site "vocabulary.ml:30:4"
let __mtrace_site_101 = Mtrace_lwt.site "vocabulary.ml:30:21"
let __mtrace_site_102 = Mtrace_lwt.site "vocabulary.ml:30:44"
let __mtrace_site_103 = Mtrace_lwt.site "vocabulary.ml:30:65"
let __mtrace_site_104 = Mtrace_lwt.site "vocabulary.ml:30:89"
let __mtrace_site_105 = Mtrace_lwt.site "vocabulary.ml:31:4"
let __mtrace_site_106 = Mtrace_lwt.site "vocabulary.ml:31:29"
let __mtrace_site_107 = Mtrace_lwt.site "vocabulary.ml:31:45"
let __mtrace_site_108 = Mtrace_lwt.site "vocabulary.ml:31:67"
let __mtrace_site_109 = Mtrace_lwt.site "vocabulary.ml:32:4"
let __mtrace_site_110 = Mtrace_lwt.site "vocabulary.ml:32:22"
let __mtrace_site_111 = Mtrace_lwt.site "vocabulary.ml:32:39"
let __mtrace_site_112 = Mtrace_lwt.site "vocabulary.ml:32:56"
let __mtrace_site_113 = Mtrace_lwt.site "vocabulary.ml:34:4"
let __mtrace_site_114 = Mtrace_lwt.site "vocabulary.ml:34:18"
let __mtrace_site_115 = Mtrace_lwt.site "vocabulary.ml:34:33"
let __mtrace_site_116 = Mtrace_lwt.site "vocabulary.ml:34:47"
let __mtrace_site_117 = Mtrace_lwt.site "vocabulary.ml:35:29"
let __mtrace_site_118 = Mtrace_lwt.site "vocabulary.ml:35:45"
let __mtrace_site_119 = Mtrace_lwt.site "vocabulary.ml:35:66"
let __mtrace_site_120 = Mtrace_lwt.site "vocabulary.ml:36:4"
let __mtrace_site_121 = Mtrace_lwt.site "vocabulary.ml:36:27"
let __mtrace_site_122 = Mtrace_lwt.site "vocabulary.ml:36:45"
let v_lwt =
  ((fun __mtrace_x -> Mtrace_lwt.bind ~site:__mtrace_site_0 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.map ~site:__mtrace_site_1 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.catch ~site:__mtrace_site_2 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.try_bind ~site:__mtrace_site_3 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.finalize ~site:__mtrace_site_4 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.both ~site:__mtrace_site_5 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.all ~site:__mtrace_site_6 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.join ~site:__mtrace_site_7 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.pick ~site:__mtrace_site_8 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.npick ~site:__mtrace_site_9 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.choose ~site:__mtrace_site_10 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.nchoose ~site:__mtrace_site_11 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.nchoose_split ~site:__mtrace_site_12 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.pause ~site:__mtrace_site_13 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap ~site:__mtrace_site_14 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap1 ~site:__mtrace_site_15 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap2 ~site:__mtrace_site_16 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap3 ~site:__mtrace_site_17 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap4 ~site:__mtrace_site_18 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap5 ~site:__mtrace_site_19 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap6 ~site:__mtrace_site_20 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wrap7 ~site:__mtrace_site_21 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.apply ~site:__mtrace_site_22 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.on_success ~site:__mtrace_site_23 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.on_failure ~site:__mtrace_site_24 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.on_termination ~site:__mtrace_site_25 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.on_any ~site:__mtrace_site_26 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.async ~site:__mtrace_site_27 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.dont_wait ~site:__mtrace_site_28 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.wait ~site:__mtrace_site_29 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.task ~site:__mtrace_site_30 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.protected ~site:__mtrace_site_31 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.no_cancel ~site:__mtrace_site_32 __mtrace_x))
let v_list =
  ((fun __mtrace_x ->
      Mtrace_lwt.List.iter_s ~site:__mtrace_site_33 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.iter_p ~site:__mtrace_site_34 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.iteri_s ~site:__mtrace_site_35 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.iteri_p ~site:__mtrace_site_36 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.map_s ~site:__mtrace_site_37 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.map_p ~site:__mtrace_site_38 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.mapi_s ~site:__mtrace_site_39 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.mapi_p ~site:__mtrace_site_40 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.rev_map_s ~site:__mtrace_site_41 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.rev_map_p ~site:__mtrace_site_42 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.fold_left_s ~site:__mtrace_site_43 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.fold_right_s ~site:__mtrace_site_44 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.for_all_s ~site:__mtrace_site_45 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.for_all_p ~site:__mtrace_site_46 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.exists_s ~site:__mtrace_site_47 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.exists_p ~site:__mtrace_site_48 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.find_s ~site:__mtrace_site_49 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.filter_s ~site:__mtrace_site_50 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.filter_p ~site:__mtrace_site_51 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.filter_map_s ~site:__mtrace_site_52 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.filter_map_p ~site:__mtrace_site_53 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.partition_s ~site:__mtrace_site_54 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.List.partition_p ~site:__mtrace_site_55 __mtrace_x))
let v_stream =
  ((fun __mtrace_x ->
      Mtrace_lwt.Stream.next ~site:__mtrace_site_56 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.get ~site:__mtrace_site_57 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.peek ~site:__mtrace_site_58 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.junk ~site:__mtrace_site_59 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.nget ~site:__mtrace_site_60 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.npeek ~site:__mtrace_site_61 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.njunk ~site:__mtrace_site_62 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.last_new ~site:__mtrace_site_63 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.to_list ~site:__mtrace_site_64 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.iter ~site:__mtrace_site_65 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.iter_s ~site:__mtrace_site_66 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.iter_p ~site:__mtrace_site_67 __mtrace_x),
    (fun ?max_concurrency ->
       fun __mtrace_x ->
         Mtrace_lwt.Stream.iter_n ~site:__mtrace_site_68 ?max_concurrency
           __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.fold ~site:__mtrace_site_69 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.fold_s ~site:__mtrace_site_70 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.find ~site:__mtrace_site_71 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.find_s ~site:__mtrace_site_72 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.find_map ~site:__mtrace_site_73 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.find_map_s ~site:__mtrace_site_74 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.map_s ~site:__mtrace_site_75 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.filter_s ~site:__mtrace_site_76 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.filter_map_s ~site:__mtrace_site_77 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.map_list_s ~site:__mtrace_site_78 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.junk_old ~site:__mtrace_site_79 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.is_empty ~site:__mtrace_site_80 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.closed ~site:__mtrace_site_81 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.to_string ~site:__mtrace_site_82 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.get_while ~site:__mtrace_site_83 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.get_while_s ~site:__mtrace_site_84 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.junk_while ~site:__mtrace_site_85 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.junk_while_s ~site:__mtrace_site_86 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.parse ~site:__mtrace_site_87 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Stream.from ~site:__mtrace_site_88 __mtrace_x))
let v_seq =
  ((fun __mtrace_x -> Mtrace_lwt.Seq.iter ~site:__mtrace_site_89 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.iter_s ~site:__mtrace_site_90 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.iter_p ~site:__mtrace_site_91 __mtrace_x),
    (fun ?max_concurrency ->
       fun __mtrace_x ->
         Mtrace_lwt.Seq.iter_n ~site:__mtrace_site_92 ?max_concurrency
           __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.fold_left ~site:__mtrace_site_93 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.fold_left_s ~site:__mtrace_site_94 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.to_list ~site:__mtrace_site_95 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.Seq.map_s ~site:__mtrace_site_96 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.filter_s ~site:__mtrace_site_97 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.filter_map_s ~site:__mtrace_site_98 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Seq.unfold_lwt ~site:__mtrace_site_99 __mtrace_x))
let v_result =
  ((fun __mtrace_x ->
      Mtrace_lwt.Result.bind ~site:__mtrace_site_100 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.bind_error ~site:__mtrace_site_101 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.bind_lwt ~site:__mtrace_site_102 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.bind_result ~site:__mtrace_site_103 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.bind_lwt_error ~site:__mtrace_site_104 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.bind_lwt_err ~site:__mtrace_site_105 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.map ~site:__mtrace_site_106 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.map_error ~site:__mtrace_site_107 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.map_err ~site:__mtrace_site_108 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.catch ~site:__mtrace_site_109 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.both ~site:__mtrace_site_110 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.iter ~site:__mtrace_site_111 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Result.iter_error ~site:__mtrace_site_112 __mtrace_x))
let v_rest =
  ((fun __mtrace_x -> Mtrace_lwt.Pool.use ~site:__mtrace_site_113 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Mvar.take ~site:__mtrace_site_114 __mtrace_x),
    (fun __mtrace_x -> Mtrace_lwt.Mvar.put ~site:__mtrace_site_115 __mtrace_x),
    (fun ?mutex ->
       fun __mtrace_x ->
         Mtrace_lwt.Condition.wait ~site:__mtrace_site_116 ?mutex __mtrace_x),
    Mtrace_lwt.Condition.signal, Mtrace_lwt.Condition.broadcast,
    (fun __mtrace_x ->
       Mtrace_lwt.Mutex.lock ~site:__mtrace_site_117 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt.Mutex.with_lock ~site:__mtrace_site_118 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt_unix.sleep ~site:__mtrace_site_119 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt_unix.with_timeout ~site:__mtrace_site_120 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt_unix.timeout ~site:__mtrace_site_121 __mtrace_x),
    (fun __mtrace_x ->
       Mtrace_lwt_unix.yield ~site:__mtrace_site_122 __mtrace_x))
